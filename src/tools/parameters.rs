//! Tool parameters. One declaration per parameter gives both the input JSON Schema and the
//! argument checks, so the published schema and the server cannot disagree: arguments the
//! schema rejects are always rejected, with an [`ArgumentError`] naming the tool and argument.

use serde_json::{Map, Number, Value, json};

use crate::core::MAX_VALUE_CHARS;
use crate::session::{Address, EvidenceId};
use crate::text::Quoted;

/// One parameter of a tool.
pub(crate) struct Parameter {
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    pub(crate) kind: Kind,
    pub(crate) required: bool,
}

/// What values a parameter takes.
pub(crate) enum Kind {
    /// A string of 1 to [`MAX_VALUE_CHARS`] characters.
    Text,
    /// An address: `0x` and 1 to 16 lowercase hexadecimal digits.
    Address,
    /// An Evidence ID: `ev-` and twelve digits.
    EvidenceId,
    /// An integer from `min` to `max`; `default` when absent (unused when required).
    Integer { min: u64, max: u64, default: u64 },
    /// One of these strings; the first is the default.
    Choice(&'static [&'static str]),
    /// Any JSON object (a document the tool validates itself, e.g. a process capture).
    Object,
    /// A JSON array of at most `max_items` items (the tool checks the items itself).
    List { max_items: usize },
    /// A JSON array of 1 to `max_items` Evidence IDs.
    EvidenceIds { max_items: usize },
}

impl Parameter {
    fn schema(&self) -> Value {
        let mut schema = match &self.kind {
            Kind::Text => json!({"type": "string", "minLength": 1, "maxLength": MAX_VALUE_CHARS}),
            Kind::Address => json!({"type": "string", "pattern": "^0x[0-9a-f]{1,16}$"}),
            Kind::EvidenceId => json!({"type": "string", "pattern": "^ev-[0-9]{12}$"}),
            Kind::Integer { min, max, default } => {
                let mut schema = json!({"type": "integer", "minimum": min, "maximum": max});
                if !self.required {
                    schema["default"] = json!(default);
                }
                schema
            }
            Kind::Choice(options) => {
                json!({"type": "string", "enum": options, "default": options.first()})
            }
            Kind::Object => json!({"type": "object"}),
            Kind::List { max_items } => json!({"type": "array", "maxItems": max_items}),
            Kind::EvidenceIds { max_items } => json!({
                "type": "array",
                "items": {"type": "string", "pattern": "^ev-[0-9]{12}$"},
                "minItems": 1,
                "maxItems": max_items,
            }),
        };
        schema["description"] = json!(self.description);
        schema
    }
}

/// The input schema of a tool taking `parameters`: a JSON Schema (2020-12) object schema with
/// `additionalProperties: false`.
pub(crate) fn input_schema(parameters: &[Parameter]) -> Value {
    let properties: Map<String, Value> = parameters
        .iter()
        .map(|p| (p.name.to_owned(), p.schema()))
        .collect();
    let required: Vec<&str> = parameters
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name)
        .collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// Why the arguments of a tool call were rejected. Messages name the tool and the argument;
/// what the caller sent is quoted as [`Quoted`] (at most 64 characters).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgumentError {
    /// The tool has no parameter of this name.
    #[error("{tool} has no argument {argument:?}; {}", accepted_list(accepted))]
    Unknown {
        /// The tool.
        tool: &'static str,
        /// The rejected name.
        argument: Quoted,
        /// The tool's parameter names.
        accepted: Vec<&'static str>,
    },
    /// A required argument is absent.
    #[error("{tool} needs the argument {argument:?}")]
    Missing {
        /// The tool.
        tool: &'static str,
        /// The missing argument.
        argument: &'static str,
    },
    /// The argument has the wrong JSON type.
    #[error(
        "argument {argument:?} of {tool} must be {expected}, not {found}{}",
        if *omissible { " (omit it to use the default)" } else { "" }
    )]
    WrongType {
        /// The tool.
        tool: &'static str,
        /// The argument.
        argument: &'static str,
        /// The expected type, e.g. `a string`.
        expected: &'static str,
        /// The type given, e.g. `null`.
        found: &'static str,
        /// Whether the argument is optional and was given as `null`: leaving it out works.
        omissible: bool,
    },
    /// A string argument is empty or longer than [`MAX_VALUE_CHARS`] characters.
    #[error(
        "argument {argument:?} of {tool} must be 1 to {MAX_VALUE_CHARS} characters long, not {chars}"
    )]
    Length {
        /// The tool.
        tool: &'static str,
        /// The argument.
        argument: &'static str,
        /// Its length in characters.
        chars: usize,
    },
    /// An integer argument is out of range or not an integer.
    #[error("argument {argument:?} of {tool} must be an integer from {min} to {max}, not {found}")]
    Range {
        /// The tool.
        tool: &'static str,
        /// The argument.
        argument: &'static str,
        /// The smallest accepted value.
        min: u64,
        /// The largest accepted value.
        max: u64,
        /// The number given, as JSON.
        found: String,
    },
    /// A choice argument is not one of its options.
    #[error(
        "argument {argument:?} of {tool} must be one of {}, not {found:?}",
        quoted_list(options)
    )]
    Choice {
        /// The tool.
        tool: &'static str,
        /// The argument.
        argument: &'static str,
        /// The accepted values.
        options: &'static [&'static str],
        /// The value given.
        found: Quoted,
    },
    /// None, or more than one, of arguments that exclude each other was given.
    #[error("{tool} needs exactly one of the arguments {}", quoted_list(arguments))]
    OneOf {
        /// The tool.
        tool: &'static str,
        /// The arguments of which exactly one must be given.
        arguments: &'static [&'static str],
    },
    /// An argument was given without the argument it qualifies.
    #[error("argument {argument:?} of {tool} is used only with the argument {requires:?}")]
    Requires {
        /// The tool.
        tool: &'static str,
        /// The argument given.
        argument: &'static str,
        /// The argument it needs.
        requires: &'static str,
    },
    /// The argument's text does not have the required syntax.
    #[error("argument {argument:?} of {tool} is invalid: {reason}")]
    Syntax {
        /// The tool.
        tool: &'static str,
        /// The argument.
        argument: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

fn accepted_list(accepted: &[&str]) -> String {
    if accepted.is_empty() {
        "it takes no arguments".to_owned()
    } else {
        format!("it accepts: {}", accepted.join(", "))
    }
}

fn quoted_list(options: &[&str]) -> String {
    let quoted: Vec<String> = options.iter().map(|o| format!("{o:?}")).collect();
    quoted.join(", ")
}

/// The value of a JSON number if it is an integer (JSON Schema counts `5.0` as one).
fn integer_value(number: &Number) -> Option<i128> {
    if let Some(value) = number.as_i64() {
        return Some(value.into());
    }
    if let Some(value) = number.as_u64() {
        return Some(value.into());
    }
    let float = number.as_f64()?;
    if !float.is_finite() || float.fract() != 0.0 {
        return None;
    }
    // Integral floats beyond 2^64 in magnitude are clamped: they are out of every range we
    // declare either way.
    let bound = 18_446_744_073_709_551_616.0; // 2^64
    #[allow(clippy::cast_possible_truncation)] // integral and within +-2^64
    Some(float.clamp(-bound, bound) as i128)
}

/// Arguments checked against a tool's parameters. Handlers never see it: they are given the
/// typed argument struct that [`tool_arguments!`] declares, built by [`Arguments::typed`].
pub(crate) struct Arguments<'a> {
    tool: &'static str,
    values: &'a Map<String, Value>,
}

impl<'a> Arguments<'a> {
    /// Checks `values` against `parameters`: unknown names first (in name order), then each
    /// parameter in declaration order.
    pub(crate) fn check(
        tool: &'static str,
        parameters: &'static [Parameter],
        values: &'a Map<String, Value>,
    ) -> Result<Arguments<'a>, ArgumentError> {
        if let Some(unknown) = values
            .keys()
            .find(|name| !parameters.iter().any(|p| p.name == name.as_str()))
        {
            return Err(ArgumentError::Unknown {
                tool,
                argument: unknown.into(),
                accepted: parameters
                    .iter()
                    .chain([&SESSION])
                    .map(|p| p.name)
                    .collect(),
            });
        }
        for parameter in parameters {
            match values.get(parameter.name) {
                Some(value) => check_value(tool, parameter, value)?,
                None if parameter.required => {
                    return Err(ArgumentError::Missing {
                        tool,
                        argument: parameter.name,
                    });
                }
                None => {}
            }
        }
        Ok(Arguments { tool, values })
    }

    /// The tool these arguments were checked for.
    pub(crate) fn tool(&self) -> &'static str {
        self.tool
    }

    /// The arguments as the tool's typed argument struct.
    pub(crate) fn typed<T: FromArguments<'a>>(&self) -> Result<T, ArgumentError> {
        T::from_arguments(self)
    }

    /// The optional [`PROVIDER`] and [`DOCUMENT`] arguments that pick the target of a
    /// provider-backed tool (the [`super::ToolBox`] reads them before the handler runs).
    pub(crate) fn target_selection(&self) -> (Option<&'a str>, Option<&'a str>) {
        (self.text(PROVIDER.name), self.text(DOCUMENT.name))
    }

    fn text(&self, name: &str) -> Option<&'a str> {
        self.values.get(name).and_then(Value::as_str)
    }

    fn value(&self, parameter: &Parameter) -> Option<&'a Value> {
        self.values.get(parameter.name)
    }

    fn missing(&self, parameter: &Parameter) -> ArgumentError {
        ArgumentError::Missing {
            tool: self.tool,
            argument: parameter.name,
        }
    }
}

/// A typed argument struct: what a handler is given instead of the argument map. Declare one
/// with [`tool_arguments!`], which also yields its [`Parameter`] table.
pub(crate) trait FromArguments<'a>: Sized {
    /// The tool's parameters, in declaration order: the input schema and the checks.
    const PARAMETERS: &'static [Parameter];

    /// The struct from arguments already checked against [`FromArguments::PARAMETERS`].
    fn from_arguments(arguments: &Arguments<'a>) -> Result<Self, ArgumentError>;
}

/// Which parameters a field type can hold (checked at compile time by [`fits`]).
pub(crate) enum Shape {
    /// `&str`: a required text or Evidence ID.
    Text,
    /// `Option<&str>`: an optional text or Evidence ID.
    OptionalText,
    /// [`Address`]: a required address.
    Address,
    /// `Option<Address>`: an optional address.
    OptionalAddress,
    /// `u64`: an integer, its default applied when absent.
    Integer,
    /// `Option<u64>`: an optional integer, `None` when absent.
    OptionalInteger,
    /// `&Value`: a required object or list, as given.
    Json,
    /// `Vec<String>`: a list of Evidence IDs.
    EvidenceIds,
    /// An enum declared with [`choice!`]: a choice with exactly these options.
    Choice(&'static [&'static str]),
}

/// One field type of a typed argument struct.
pub(crate) trait FromArgument<'a>: Sized {
    /// The parameters it can hold.
    const SHAPE: Shape;

    /// The value of `parameter` among arguments already checked.
    fn from_argument(
        arguments: &Arguments<'a>,
        parameter: &'static Parameter,
    ) -> Result<Self, ArgumentError>;
}

impl<'a> FromArgument<'a> for &'a str {
    const SHAPE: Shape = Shape::Text;

    fn from_argument(
        arguments: &Arguments<'a>,
        parameter: &'static Parameter,
    ) -> Result<Self, ArgumentError> {
        arguments
            .text(parameter.name)
            .ok_or_else(|| arguments.missing(parameter))
    }
}

impl<'a> FromArgument<'a> for Option<&'a str> {
    const SHAPE: Shape = Shape::OptionalText;

    fn from_argument(
        arguments: &Arguments<'a>,
        parameter: &'static Parameter,
    ) -> Result<Self, ArgumentError> {
        Ok(arguments.text(parameter.name))
    }
}

impl<'a> FromArgument<'a> for Option<Address> {
    const SHAPE: Shape = Shape::OptionalAddress;

    fn from_argument(
        arguments: &Arguments<'a>,
        parameter: &'static Parameter,
    ) -> Result<Self, ArgumentError> {
        let Some(text) = arguments.text(parameter.name) else {
            return Ok(None);
        };
        Address::parse(text)
            .map(Some)
            .map_err(|error| ArgumentError::Syntax {
                tool: arguments.tool,
                argument: parameter.name,
                reason: error.to_string(),
            })
    }
}

impl<'a> FromArgument<'a> for Address {
    const SHAPE: Shape = Shape::Address;

    fn from_argument(
        arguments: &Arguments<'a>,
        parameter: &'static Parameter,
    ) -> Result<Self, ArgumentError> {
        Option::<Address>::from_argument(arguments, parameter)?
            .ok_or_else(|| arguments.missing(parameter))
    }
}

impl<'a> FromArgument<'a> for Option<u64> {
    const SHAPE: Shape = Shape::OptionalInteger;

    fn from_argument(
        arguments: &Arguments<'a>,
        parameter: &'static Parameter,
    ) -> Result<Self, ArgumentError> {
        Ok(arguments
            .value(parameter)
            .and_then(Value::as_number)
            .and_then(integer_value)
            .and_then(|value| u64::try_from(value).ok()))
    }
}

impl<'a> FromArgument<'a> for u64 {
    const SHAPE: Shape = Shape::Integer;

    fn from_argument(
        arguments: &Arguments<'a>,
        parameter: &'static Parameter,
    ) -> Result<Self, ArgumentError> {
        let given = Option::<u64>::from_argument(arguments, parameter)?;
        Ok(given.unwrap_or(match parameter.kind {
            Kind::Integer { default, .. } => default,
            _ => 0,
        }))
    }
}

impl<'a> FromArgument<'a> for &'a Value {
    const SHAPE: Shape = Shape::Json;

    fn from_argument(
        arguments: &Arguments<'a>,
        parameter: &'static Parameter,
    ) -> Result<Self, ArgumentError> {
        arguments
            .value(parameter)
            .ok_or_else(|| arguments.missing(parameter))
    }
}

impl<'a> FromArgument<'a> for Vec<String> {
    const SHAPE: Shape = Shape::EvidenceIds;

    fn from_argument(
        arguments: &Arguments<'a>,
        parameter: &'static Parameter,
    ) -> Result<Self, ArgumentError> {
        Ok(arguments
            .value(parameter)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default())
    }
}

/// The option of a choice parameter given in `arguments`, or the first (the default).
pub(crate) fn choice_index(arguments: &Arguments<'_>, parameter: &Parameter) -> usize {
    let Kind::Choice(options) = parameter.kind else {
        return 0;
    };
    let given = arguments.text(parameter.name);
    options
        .iter()
        .position(|option| Some(*option) == given)
        .unwrap_or(0)
}

/// Whether a field named `field` of shape `shape` can hold `parameter`: the names agree (a raw
/// identifier `r#match` names `match`), and the kind and requiredness fit the type.
pub(crate) const fn fits(parameter: &Parameter, field: &str, shape: &Shape) -> bool {
    names_agree(parameter, field)
        && match (shape, &parameter.kind) {
            (Shape::Text, Kind::Text | Kind::EvidenceId) => parameter.required,
            (Shape::OptionalText, Kind::Text | Kind::EvidenceId) => !parameter.required,
            (Shape::Address, Kind::Address) => parameter.required,
            (Shape::OptionalAddress, Kind::Address) => !parameter.required,
            (Shape::Integer, Kind::Integer { .. }) => true,
            (Shape::OptionalInteger, Kind::Integer { .. }) => !parameter.required,
            (Shape::Json, Kind::Object | Kind::List { .. }) => parameter.required,
            (Shape::EvidenceIds, Kind::EvidenceIds { .. }) => true,
            (Shape::Choice(fields), Kind::Choice(options)) => {
                !parameter.required && same_strings(fields, options)
            }
            _ => false,
        }
}

/// Whether the field `field` names `parameter` (a raw identifier `r#match` names `match`).
pub(crate) const fn names_agree(parameter: &Parameter, field: &str) -> bool {
    let field = match field.as_bytes() {
        [b'r', b'#', ..] => field.split_at(2).1,
        _ => field,
    };
    same_str(parameter.name, field)
}

const fn same_strings(a: &[&str], b: &[&str]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        if !same_str(a[index], b[index]) {
            return false;
        }
        index += 1;
    }
    true
}

const fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        if a[index] != b[index] {
            return false;
        }
        index += 1;
    }
    true
}

/// Declares a tool's arguments once: the [`Parameter`] table (input schema and checks, in
/// declaration order) and a typed struct with one field per parameter, so a handler reads
/// `arguments.limit`, and a misspelled argument is a compile error.
///
/// Each entry is `field: Type = PARAMETER` (the field's name must be the parameter's name and
/// its type must fit the parameter's kind: both are checked at compile time), or
/// `field = PARAMETER` for a parameter the handler does not read (the `provider` and
/// `document` that the ToolBox reads to pick the target). Field types: `&'a str`,
/// `Option<&'a str>`, [`Address`], `Option<Address>`, `u64` (default applied),
/// `Option<u64>`, `&'a Value`, `Vec<String>`, or an enum declared with [`choice!`].
macro_rules! tool_arguments {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident<'a> {
            $( $field:ident $(: $type:ty)? = $parameter:expr ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name<'a> {
            $( $( pub(super) $field: $type, )? )*
            _arguments: ::std::marker::PhantomData<&'a ()>,
        }

        $( const _: () = assert!(
            $crate::tools::parameters::names_agree(&$parameter, stringify!($field)),
            concat!("the field ", stringify!($field), " of ", stringify!($name),
                " does not have the name of its parameter"),
        ); )*

        impl<'a> $crate::tools::parameters::FromArguments<'a> for $name<'a> {
            const PARAMETERS: &'static [$crate::tools::parameters::Parameter] = &[$($parameter),*];

            // A struct of target parameters only reads nothing.
            #[allow(unused_variables)]
            fn from_arguments(
                arguments: &$crate::tools::parameters::Arguments<'a>,
            ) -> Result<Self, $crate::tools::parameters::ArgumentError> {
                Ok($name {
                    $( $( $field: {
                        const PARAMETER: $crate::tools::parameters::Parameter = $parameter;
                        const {
                            assert!(
                                $crate::tools::parameters::fits(
                                    &PARAMETER,
                                    stringify!($field),
                                    &<$type as $crate::tools::parameters::FromArgument<'a>>::SHAPE,
                                ),
                                concat!("the type of the field ", stringify!($field), " of ",
                                    stringify!($name), " does not fit its parameter"),
                            )
                        };
                        <$type as $crate::tools::parameters::FromArgument<'a>>::from_argument(
                            arguments,
                            &PARAMETER,
                        )?
                    }, )? )*
                    _arguments: ::std::marker::PhantomData,
                })
            }
        }
    };
}
pub(crate) use tool_arguments;

/// Declares the enum of a choice parameter: its options (the first is the default) for
/// `Kind::Choice(Enum::OPTIONS)`, and how a typed argument struct reads it.
macro_rules! choice {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident = $option:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $( $(#[$variant_meta])* $variant ),+
        }

        impl $name {
            /// The options, as the parameter declares them; the first is the default.
            $vis const OPTIONS: &'static [&'static str] = &[$($option),+];
            const VARIANTS: &'static [$name] = &[$($name::$variant),+];
        }

        impl<'a> $crate::tools::parameters::FromArgument<'a> for $name {
            const SHAPE: $crate::tools::parameters::Shape =
                $crate::tools::parameters::Shape::Choice($name::OPTIONS);

            fn from_argument(
                arguments: &$crate::tools::parameters::Arguments<'a>,
                parameter: &'static $crate::tools::parameters::Parameter,
            ) -> Result<Self, $crate::tools::parameters::ArgumentError> {
                let index = $crate::tools::parameters::choice_index(arguments, parameter);
                Ok($name::VARIANTS.get(index).copied().unwrap_or($name::VARIANTS[0]))
            }
        }
    };
}
pub(crate) use choice;

fn check_value(
    tool: &'static str,
    parameter: &Parameter,
    value: &Value,
) -> Result<(), ArgumentError> {
    let argument = parameter.name;
    let wrong_type = |expected| ArgumentError::WrongType {
        tool,
        argument,
        expected,
        found: crate::text::json_kind(value),
        omissible: value.is_null() && !parameter.required,
    };
    let syntax = |reason: String| ArgumentError::Syntax {
        tool,
        argument,
        reason,
    };
    match &parameter.kind {
        Kind::Integer { min, max, .. } => {
            let Value::Number(number) = value else {
                return Err(wrong_type("an integer"));
            };
            let in_range = integer_value(number)
                .is_some_and(|n| i128::from(*min) <= n && n <= i128::from(*max));
            if !in_range {
                return Err(ArgumentError::Range {
                    tool,
                    argument,
                    min: *min,
                    max: *max,
                    found: number.to_string(),
                });
            }
        }
        Kind::Object => {
            if !value.is_object() {
                return Err(wrong_type("an object"));
            }
        }
        Kind::List { max_items } | Kind::EvidenceIds { max_items } => {
            let Value::Array(items) = value else {
                return Err(wrong_type("an array"));
            };
            let min_items = usize::from(matches!(parameter.kind, Kind::EvidenceIds { .. }));
            if items.len() < min_items || items.len() > *max_items {
                return Err(syntax(format!(
                    "it must hold {min_items} to {max_items} items, not {}",
                    items.len()
                )));
            }
            if matches!(parameter.kind, Kind::EvidenceIds { .. }) {
                for (index, item) in items.iter().enumerate() {
                    let Value::String(text) = item else {
                        return Err(syntax(format!(
                            "item {index} must be a string, not {}",
                            crate::text::json_kind(item)
                        )));
                    };
                    EvidenceId::parse(text).map_err(|e| syntax(format!("item {index}: {e}")))?;
                }
            }
        }
        kind => {
            let Value::String(text) = value else {
                return Err(wrong_type("a string"));
            };
            match kind {
                Kind::Address => {
                    Address::parse(text).map_err(|e| syntax(e.to_string()))?;
                }
                Kind::EvidenceId => {
                    EvidenceId::parse(text).map_err(|e| syntax(e.to_string()))?;
                }
                Kind::Choice(options) if !options.contains(&text.as_str()) => {
                    return Err(ArgumentError::Choice {
                        tool,
                        argument,
                        options,
                        found: text.into(),
                    });
                }
                Kind::Text => {
                    let chars = text.chars().count();
                    if chars == 0 || chars > MAX_VALUE_CHARS {
                        return Err(ArgumentError::Length {
                            tool,
                            argument,
                            chars,
                        });
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The optional `provider` argument of provider-backed tools.
pub(crate) const PROVIDER: Parameter = Parameter {
    name: "provider",
    description: "Identity of a declared provider (see list_providers); default: the current provider.",
    kind: Kind::Text,
    required: false,
};

/// The optional `session` argument every tool takes. The [`super::ToolBox`] takes it out of the
/// arguments (see [`split_session`]) before the tool's own parameters are checked, so no tool
/// declares it.
pub(crate) const SESSION: Parameter = Parameter {
    name: "session",
    description: "The binary session to work in: the `session` that open_binary returned. \
        Default: this client's session (the one it opened or named last).",
    kind: Kind::Text,
    required: false,
};

/// The JSON Schema of [`SESSION`].
pub(crate) fn session_schema() -> Value {
    SESSION.schema()
}

/// Takes the checked [`SESSION`] argument out of `arguments`: the handle it names (if given)
/// and the other arguments.
pub(crate) fn split_session(
    tool: &'static str,
    arguments: &Map<String, Value>,
) -> Result<(Option<String>, Map<String, Value>), ArgumentError> {
    let mut rest = arguments.clone();
    match rest.remove(SESSION.name) {
        None => Ok((None, rest)),
        Some(value) => {
            check_value(tool, &SESSION, &value)?;
            let handle = value.as_str().map(str::to_owned);
            Ok((handle, rest))
        }
    }
}

/// The optional `cursor` argument of paged tools.
pub(crate) const CURSOR: Parameter = Parameter {
    name: "cursor",
    description: "The `next_cursor` of the previous page; omit for the first page.",
    kind: Kind::Text,
    required: false,
};

/// The optional `document` argument of provider-backed tools.
pub(crate) const DOCUMENT: Parameter = Parameter {
    name: "document",
    description: "Name of a document of the provider (see list_documents); default: the current document.",
    kind: Kind::Text,
    required: false,
};

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{Kind, Parameter, Shape, fits, names_agree};

    fn parameter(name: &'static str, kind: Kind, required: bool) -> Parameter {
        Parameter {
            name,
            description: "",
            kind,
            required,
        }
    }

    #[test]
    fn each_field_type_fits_exactly_its_kinds() {
        let integer = || Kind::Integer {
            min: 1,
            max: 9,
            default: 5,
        };
        let cases = [
            (Shape::Text, Kind::Text, true, true),
            (Shape::Text, Kind::EvidenceId, true, true),
            (Shape::Text, Kind::Text, false, false),
            (Shape::OptionalText, Kind::Text, false, true),
            (Shape::OptionalText, Kind::Address, false, false),
            (Shape::Address, Kind::Address, true, true),
            (Shape::Address, Kind::Text, true, false),
            (Shape::OptionalAddress, Kind::Address, false, true),
            (Shape::OptionalAddress, Kind::Address, true, false),
            (Shape::Integer, integer(), true, true),
            (Shape::Integer, integer(), false, true),
            (Shape::Integer, Kind::Text, false, false),
            (Shape::OptionalInteger, integer(), false, true),
            (Shape::OptionalInteger, integer(), true, false),
            (Shape::Json, Kind::Object, true, true),
            (Shape::Json, Kind::List { max_items: 3 }, true, true),
            (Shape::Json, Kind::Object, false, false),
            (
                Shape::EvidenceIds,
                Kind::EvidenceIds { max_items: 3 },
                true,
                true,
            ),
            (Shape::EvidenceIds, Kind::List { max_items: 3 }, true, false),
            (
                Shape::Choice(&["a", "b"]),
                Kind::Choice(&["a", "b"]),
                false,
                true,
            ),
            (
                Shape::Choice(&["a", "b"]),
                Kind::Choice(&["b", "a"]),
                false,
                false,
            ),
            (
                Shape::Choice(&["a"]),
                Kind::Choice(&["a", "b"]),
                false,
                false,
            ),
            (
                Shape::Choice(&["a", "b"]),
                Kind::Choice(&["a", "b"]),
                true,
                false,
            ),
        ];
        for (index, (shape, kind, required, expected)) in cases.into_iter().enumerate() {
            let parameter = parameter("x", kind, required);
            assert_eq!(fits(&parameter, "x", &shape), expected, "case {index}");
            assert!(!fits(&parameter, "y", &shape), "case {index}: another name");
        }
    }

    proptest! {
        /// A field names a parameter exactly when the names are equal, or the field is the raw
        /// identifier of the name.
        #[test]
        fn a_field_names_the_parameter_of_its_name(
            name in "[a-z_]{1,12}",
            field in "[a-z_]{1,12}",
        ) {
            let name: &'static str = Box::leak(name.into_boxed_str());
            let parameter = parameter(name, Kind::Text, true);
            prop_assert_eq!(names_agree(&parameter, &field), field == name);
            let raw = format!("r#{name}");
            prop_assert!(names_agree(&parameter, &raw));
            prop_assert_eq!(names_agree(&parameter, &format!("r#{field}")), field == name);
        }
    }
}
