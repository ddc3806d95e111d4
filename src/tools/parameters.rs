//! Tool parameters. One declaration per parameter gives both the input JSON Schema and the
//! argument checks, so the published schema and the server cannot disagree: arguments the
//! schema rejects are always rejected, with an [`ArgumentError`] naming the tool and argument.

use crate::session::Cancel;
use serde_json::{Map, Number, Value, json};

use crate::core::MAX_VALUE_CHARS;
use crate::session::{Address, EvidenceId};

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

/// Why the arguments of a tool call were rejected. Messages name the tool and the argument.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgumentError {
    /// The tool has no parameter of this name.
    #[error("{tool} has no argument {argument:?}; {}", accepted_list(accepted))]
    Unknown {
        /// The tool.
        tool: &'static str,
        /// The rejected name, cut to 64 characters.
        argument: String,
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
        /// The value given, cut to 64 characters.
        found: String,
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

/// Arguments checked against a tool's parameters, and the call's cancellation signal (the
/// two things a handler is given besides the session).
pub(crate) struct Arguments<'a> {
    tool: &'static str,
    parameters: &'static [Parameter],
    values: &'a Map<String, Value>,
    cancel: Cancel,
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
                argument: crate::text::cut(unknown),
                accepted: parameters.iter().map(|p| p.name).collect(),
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
        Ok(Arguments {
            tool,
            parameters,
            values,
            cancel: Cancel::never(),
        })
    }

    /// The same arguments, for a call that `cancel` can cancel.
    pub(crate) fn with_cancel(self, cancel: &Cancel) -> Arguments<'a> {
        Arguments {
            cancel: cancel.clone(),
            ..self
        }
    }

    /// The call's cancellation signal: long work checks it, and commits only while unset.
    pub(crate) fn cancel(&self) -> &Cancel {
        &self.cancel
    }

    /// A text, address or Evidence ID argument, if given.
    pub(crate) fn text(&self, name: &str) -> Option<&'a str> {
        self.values.get(name).and_then(Value::as_str)
    }

    /// A required text argument.
    pub(crate) fn required_text(&self, name: &'static str) -> Result<&'a str, ArgumentError> {
        self.text(name).ok_or(ArgumentError::Missing {
            tool: self.tool,
            argument: name,
        })
    }

    /// A required address argument.
    pub(crate) fn required_address(&self, name: &'static str) -> Result<Address, ArgumentError> {
        let text = self.required_text(name)?;
        Address::parse(text).map_err(|error| ArgumentError::Syntax {
            tool: self.tool,
            argument: name,
            reason: error.to_string(),
        })
    }

    /// Whether the argument was given.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// An integer argument, or its default.
    pub(crate) fn integer(&self, name: &str) -> u64 {
        let given = self
            .values
            .get(name)
            .and_then(Value::as_number)
            .and_then(integer_value)
            .and_then(|value| u64::try_from(value).ok());
        given.unwrap_or_else(|| match self.parameter(name).map(|p| &p.kind) {
            Some(Kind::Integer { default, .. }) => *default,
            _ => 0,
        })
    }

    /// A JSON argument (object or list) as given, if given.
    pub(crate) fn json(&self, name: &str) -> Option<&'a Value> {
        self.values.get(name)
    }

    /// An Evidence ID list argument (empty when absent).
    pub(crate) fn texts(&self, name: &str) -> Vec<String> {
        self.values
            .get(name)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A choice argument, or its default (the first option).
    pub(crate) fn choice(&self, name: &str) -> &'static str {
        let Some(Kind::Choice(options)) = self.parameter(name).map(|p| &p.kind) else {
            return "";
        };
        let given = self.text(name);
        options
            .iter()
            .find(|option| Some(**option) == given)
            .or(options.first())
            .copied()
            .unwrap_or_default()
    }

    fn parameter(&self, name: &str) -> Option<&'static Parameter> {
        self.parameters.iter().find(|p| p.name == name)
    }
}

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
                        found: crate::text::cut(text),
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

/// The optional `document` argument of provider-backed tools.
pub(crate) const DOCUMENT: Parameter = Parameter {
    name: "document",
    description: "Name of a document of the provider (see list_documents); default: the current document.",
    kind: Kind::Text,
    required: false,
};
