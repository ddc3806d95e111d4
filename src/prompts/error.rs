//! Typed errors of the prompts layer. Their messages name the offending prompt and argument;
//! the mcp layer turns them into JSON-RPC `-32602` errors.

use std::fmt;

use super::bounds::MAX_PROMPT_VALUE_CHARS;

/// Why a prompt request (`prompts/get`, or the prompt reference of `completion/complete`) was
/// rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// No prompt of this name is registered.
    #[error("unknown prompt {}", Quoted(.prompt))]
    UnknownPrompt {
        /// The requested prompt name, as sent.
        prompt: String,
    },
    /// The prompt has no argument of this name.
    #[error("prompt {} has no argument {}", Quoted(.prompt), Quoted(.argument))]
    UnknownArgument {
        /// The prompt that was asked for.
        prompt: String,
        /// The argument name, as sent.
        argument: String,
    },
    /// A required argument was not supplied.
    #[error("prompt {} requires argument {}", Quoted(.prompt), Quoted(.argument))]
    MissingArgument {
        /// The prompt that was asked for.
        prompt: String,
        /// The required argument that is missing.
        argument: String,
    },
    /// An argument value is longer than [`MAX_PROMPT_VALUE_CHARS`].
    #[error(
        "argument {} of prompt {} is {chars} characters long; the limit is {MAX_PROMPT_VALUE_CHARS}",
        Quoted(.argument),
        Quoted(.prompt)
    )]
    ValueTooLong {
        /// The prompt that was asked for.
        prompt: String,
        /// The argument whose value is too long.
        argument: String,
        /// Length of the value, in Unicode scalar values.
        chars: usize,
    },
}

/// Why a prompt definition cannot be registered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DefinitionError {
    /// The prompt name is empty.
    #[error("a prompt name must not be empty")]
    EmptyPromptName,
    /// An argument name is empty.
    #[error("prompt {} has an argument with an empty name", Quoted(.prompt))]
    EmptyArgumentName {
        /// The prompt being registered.
        prompt: String,
    },
    /// Two arguments share a name.
    #[error("prompt {} declares argument {} more than once", Quoted(.prompt), Quoted(.argument))]
    DuplicateArgument {
        /// The prompt being registered.
        prompt: String,
        /// The repeated argument name.
        argument: String,
    },
}

/// Displays an untrusted name in double quotes, with control and quote characters escaped,
/// cut by the crate's one rule for caller text (`crate::text::cut`), so a huge name cannot
/// blow up an error response.
pub(crate) struct Quoted<'a>(pub(crate) &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", crate::text::cut(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_escapes_and_bounds_names() {
        assert_eq!(Quoted("a\"b\n").to_string(), r#""a\"b\n""#);
        let long = "x".repeat(crate::text::QUOTED_CHARS + 5);
        let shown = Quoted(&long).to_string();
        assert_eq!(
            shown,
            format!("\"{}...\"", "x".repeat(crate::text::QUOTED_CHARS))
        );
    }
}
