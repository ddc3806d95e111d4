//! Typed errors of the prompts layer. Their messages name the offending prompt and argument,
//! held as [`Quoted`] (in double quotes, escaped, cut to 64 characters by the crate's one rule
//! for caller text); the mcp layer turns them into JSON-RPC `-32602` errors.

use super::bounds::MAX_PROMPT_VALUE_CHARS;
use crate::text::Quoted;

/// Why a prompt request (`prompts/get`, or the prompt reference of `completion/complete`) was
/// rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// No prompt of this name is registered.
    #[error("unknown prompt {prompt:?}")]
    UnknownPrompt {
        /// The requested prompt name, as sent.
        prompt: Quoted,
    },
    /// The prompt has no argument of this name.
    #[error("prompt {prompt:?} has no argument {argument:?}")]
    UnknownArgument {
        /// The prompt that was asked for.
        prompt: Quoted,
        /// The argument name, as sent.
        argument: Quoted,
    },
    /// A required argument was not supplied.
    #[error("prompt {prompt:?} requires argument {argument:?}")]
    MissingArgument {
        /// The prompt that was asked for.
        prompt: Quoted,
        /// The required argument that is missing.
        argument: Quoted,
    },
    /// An argument value is longer than [`MAX_PROMPT_VALUE_CHARS`].
    #[error(
        "argument {argument:?} of prompt {prompt:?} is {chars} characters long; the limit is {MAX_PROMPT_VALUE_CHARS}"
    )]
    ValueTooLong {
        /// The prompt that was asked for.
        prompt: Quoted,
        /// The argument whose value is too long.
        argument: Quoted,
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
    #[error("prompt {prompt:?} has an argument with an empty name")]
    EmptyArgumentName {
        /// The prompt being registered.
        prompt: Quoted,
    },
    /// Two arguments share a name.
    #[error("prompt {prompt:?} declares argument {argument:?} more than once")]
    DuplicateArgument {
        /// The prompt being registered.
        prompt: Quoted,
        /// The repeated argument name.
        argument: Quoted,
    },
}
