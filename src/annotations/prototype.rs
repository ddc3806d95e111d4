//! The syntax check of a prototype: one C function declaration, parsed by `lang-c` (C11 with
//! GNU extensions, no preprocessor run), after a prelude that declares the usual typedefs of
//! `<stdint.h>`, `<stddef.h>`, `<stdio.h>` and `<sys/types.h>` so that `size_t` and `FILE`
//! parse as types.

use lang_c::ast::{DeclaratorKind, DerivedDeclarator, ExternalDeclaration};
use lang_c::driver::{Config, Flavor, parse_preprocessed};

use crate::text::Quoted;

/// Longest declaration, in Unicode scalar values.
pub const MAX_DECLARATION_CHARS: usize = 1_024;

/// Deepest nesting of parentheses and brackets a declaration may have. The C parser tries a
/// cast and a parenthesized expression at each `(` and backtracks, so its time grows
/// exponentially with the nesting: at 32 a fuzzed `((((...` held a thread for minutes. Real
/// prototypes nest 3 or 4 deep (`void (*signal(int, void (*)(int)))(int)`).
const MAX_NESTING: usize = 8;

/// Types every declaration may use without declaring them.
const PRELUDE: &str = "typedef unsigned long size_t; typedef long ssize_t; \
typedef long ptrdiff_t; typedef long intptr_t; typedef unsigned long uintptr_t; \
typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long long int64_t; \
typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t; \
typedef unsigned long long uint64_t; typedef int wchar_t; typedef int bool; \
typedef struct _IO_FILE FILE; typedef long off_t; typedef int pid_t; typedef unsigned int uid_t; \
typedef unsigned int gid_t; typedef unsigned int mode_t; typedef long time_t; \
typedef __builtin_va_list va_list;\n";

/// Why a declaration is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PrototypeError {
    /// Over [`MAX_DECLARATION_CHARS`].
    #[error("it is {chars} characters long; at most {limit} are allowed")]
    TooLong {
        /// Its length.
        chars: usize,
        /// The bound.
        limit: usize,
    },
    /// A character no prototype holds (an operator).
    #[error("it holds {found:?}; a C prototype holds names, `*`, `()`, `[]`, `,` and `...` only")]
    Unexpected {
        /// The first such character.
        found: char,
    },
    /// Nested deeper than the check follows.
    #[error("it nests parentheses or brackets deeper than {limit}")]
    TooDeep {
        /// The bound.
        limit: usize,
    },
    /// A preprocessor directive, a comment, a body or an initializer: the declaration is
    /// parsed as it is.
    #[error(
        "it holds `{what}`; give one C declaration without preprocessor lines, comments, bodies or initializers"
    )]
    Unparsed {
        /// What was found.
        what: &'static str,
    },
    /// Not C.
    #[error(
        "it is not a C declaration: the parser stopped at character {at} ({near:?}), \
         expecting one of {expected}"
    )]
    Syntax {
        /// Where, in characters from 0.
        at: usize,
        /// The text from there, cut.
        near: Quoted,
        /// What the parser expected, sorted, at most 8.
        expected: String,
    },
    /// C, but not one function declaration.
    #[error(
        "it is C, but not one function declaration: give e.g. `int parse_args(int argc, char **argv);`"
    )]
    NotAFunction,
}

/// Checks that `declaration` is one C function declaration (the final `;` may be left out).
pub fn check_declaration(declaration: &str) -> Result<(), PrototypeError> {
    let chars = declaration.chars().count();
    if chars > MAX_DECLARATION_CHARS {
        return Err(PrototypeError::TooLong {
            chars,
            limit: MAX_DECLARATION_CHARS,
        });
    }
    // `=`: a prototype assigns nothing, and the parser's backtracking on a long initializer
    // expression held a fuzzed thread for minutes.
    for (needle, what) in [
        ("#", "#"),
        ("/*", "/*"),
        ("//", "//"),
        ("{", "{"),
        ("=", "="),
    ] {
        if declaration.contains(needle) {
            return Err(PrototypeError::Unparsed { what });
        }
    }
    // A prototype holds names, numbers, `*`, parentheses, brackets, commas and `...`: an
    // operator means an expression, on which the parser backtracks exponentially (fuzzed
    // array sizes held a thread for minutes).
    if let Some(found) = declaration
        .chars()
        .find(|c| !(c.is_alphanumeric() || c.is_whitespace() || "_*()[],.;".contains(*c)))
    {
        return Err(PrototypeError::Unexpected { found });
    }
    let mut depth = 0usize;
    for c in declaration.chars() {
        match c {
            '(' | '[' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(PrototypeError::TooDeep { limit: MAX_NESTING });
                }
            }
            ')' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let body = declaration.trim_end();
    let terminated = if body.ends_with(';') { "" } else { ";" };
    let source = format!("{PRELUDE}{body}{terminated}\n");
    let config = Config {
        cpp_command: String::new(),
        cpp_options: Vec::new(),
        flavor: Flavor::GnuC11,
    };
    let parsed = parse_preprocessed(&config, source).map_err(|error| {
        let offset = error.offset.saturating_sub(PRELUDE.len()).min(body.len());
        let at = body
            .char_indices()
            .take_while(|&(index, _)| index < offset)
            .count();
        let near: String = body.chars().skip(at).collect();
        let mut expected: Vec<&str> = error.expected.iter().copied().collect();
        expected.sort_unstable();
        expected.truncate(8);
        PrototypeError::Syntax {
            at,
            near: near.as_str().into(),
            expected: expected.join(" "),
        }
    })?;
    let mut own = parsed
        .unit
        .0
        .iter()
        .skip_while(|declaration| declaration.span.start < PRELUDE.len());
    let (Some(only), None) = (own.next(), own.next()) else {
        return Err(PrototypeError::NotAFunction);
    };
    let ExternalDeclaration::Declaration(declaration) = &only.node else {
        return Err(PrototypeError::NotAFunction);
    };
    let [declarator] = declaration.node.declarators.as_slice() else {
        return Err(PrototypeError::NotAFunction);
    };
    let declarator = &declarator.node;
    let named = matches!(
        declarator.declarator.node.kind.node,
        DeclaratorKind::Identifier(_)
    );
    let function = declarator.declarator.node.derived.iter().any(|derived| {
        matches!(
            derived.node,
            DerivedDeclarator::Function(_) | DerivedDeclarator::KRFunction(_)
        )
    });
    if named && function && declarator.initializer.is_none() {
        Ok(())
    } else {
        Err(PrototypeError::NotAFunction)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Casts nested as deep as allowed still end (the parser's worst case), one level more is
    /// refused before parsing.
    #[test]
    fn nested_casts_end_at_the_bound_and_are_refused_past_it() {
        let nested = |depth: usize| {
            format!(
                "int f(char a[{}1{}]);",
                "(int)(".repeat(depth - 1) + "(",
                ")".repeat(depth)
            )
        };
        let at_bound = nested(MAX_NESTING - 1);
        let _ = check_declaration(&at_bound);
        assert!(matches!(
            check_declaration(&nested(MAX_NESTING + 1)),
            Err(PrototypeError::TooDeep { .. })
        ));
        assert!(matches!(
            check_declaration("int f(char a[Y+++1]);"),
            Err(PrototypeError::Unexpected { found: '+' })
        ));
        assert!(matches!(
            check_declaration("int f(int a = 1);"),
            Err(PrototypeError::Unparsed { what: "=" })
        ));
        let with_callback =
            "int qsort_r(void *base, int (*compare)(const void *, const void *, void *));";
        assert_eq!(check_declaration(with_callback), Ok(()));
    }
}
