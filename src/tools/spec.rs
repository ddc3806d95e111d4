//! [`ToolSpec`]: one catalog entry, its [`Handler`], and what the tool files share. The tool
//! files and the [`super::ToolBox`] both import this file; it imports neither.
//!
//! A handler is a plain function from its argument type (deriving `Deserialize` and
//! `JsonSchema`, see [`super::arguments`]) to its result type (a [`ToolResult`]). The four
//! constructors [`Handler::observe`], [`Handler::change`], [`Handler::read`] and
//! [`Handler::retain`] take that function and fix whether Evidence is recorded; the input
//! schema comes from the argument type and the output schema from the result type, so neither
//! is written a second time.

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::arguments::{InputSchema, SESSION, session_schema};
use super::definition::{DefinitionParts, ToolAnnotations, ToolDefinition, ToolKind};
use super::outcome::{EVIDENCE_ID_FIELD, ToolError};
use super::schema::{output_schema, single_types, string, with_optional_property, with_property};
use crate::session::{Cancel, ClientHandles, Operation, Session, SessionStore, Target};

/// A tool's result: serialized as the `structuredContent` object, and described by the output
/// schema generated from its `JsonSchema` (see [`output_schema`]; without `evidence_id`, which
/// observations add). Derive both on the result type.
pub(crate) trait ToolResult: Serialize + JsonSchema + 'static {}

impl<R: Serialize + JsonSchema + 'static> ToolResult for R {}

/// A tool's argument type: deserialized from the arguments once they fit the schema generated
/// from it.
pub(crate) trait ToolArguments: DeserializeOwned + JsonSchema + 'static {}

impl<A: DeserializeOwned + JsonSchema + 'static> ToolArguments for A {}

/// The tool that opens a binary, and a binary session when it names none.
pub(crate) const OPEN_BINARY: &str = "open_binary";

/// The tool that closes a binary session and ends it.
pub(crate) const CLOSE_BINARY: &str = "close_binary";

/// The result field of [`OPEN_BINARY`] and [`CLOSE_BINARY`] that names the session.
pub(crate) const SESSION_FIELD: &str = "session";

/// A result object, as the [`super::ToolBox`] sends and records it.
pub(crate) type ResultObject = Map<String, Value>;

/// The checked arguments of a call, without `session`.
pub(crate) type Checked = Map<String, Value>;

type Observer =
    Box<dyn Fn(&'static str, &Target, Checked) -> Result<ResultObject, ToolError> + Send + Sync>;
type Changer = Box<
    dyn Fn(&'static str, &Session, Checked, &Cancel) -> Result<ResultObject, ToolError>
        + Send
        + Sync,
>;
type Reader =
    Box<dyn Fn(&'static str, &Session, Checked) -> Result<ResultObject, ToolError> + Send + Sync>;
type Lister = Box<
    dyn Fn(&'static str, &SessionStore, &ClientHandles, Checked) -> Result<ResultObject, ToolError>
        + Send
        + Sync,
>;
type Retainer = Box<
    dyn Fn(&'static str, &Session, Checked, &Cancel) -> Result<Retained<ResultObject>, ToolError>
        + Send
        + Sync,
>;

/// Runs one tool: its input schema, the schema of its result, and how it runs.
/// A tool that works across binary sessions (`compare_procedures`): given the store, the
/// call's session handle (its `session`, else its client's) and the arguments, it answers the
/// reply and the observation to record in the session it names.
type Comparer = Box<
    dyn Fn(&'static str, &SessionStore, Option<&str>, Checked, &Cancel) -> Result<Across, ToolError>
        + Send
        + Sync,
>;

/// What a [`Run::Across`] handler answers.
pub(crate) struct Across {
    /// The session whose ledger records the observation.
    pub(crate) session: std::sync::Arc<Session>,
    /// The observation.
    pub(crate) observation: crate::session::Observation,
    /// The reply (without the Evidence ID).
    pub(crate) reply: ResultObject,
}

pub(crate) struct Handler {
    /// The input schema, generated from the handler's argument type.
    pub(crate) input: fn() -> InputSchema,
    /// The output schema, from the handler's result type.
    pub(crate) output: fn() -> Value,
    /// How it runs.
    pub(crate) run: Run,
}

/// How a tool runs. The variant fixes the tool's [`ToolKind`], so a tool cannot observe
/// without recording Evidence, nor record Evidence without observing.
pub(crate) enum Run {
    /// Observes the open binary: the [`super::ToolBox`] picks the target from the optional
    /// `provider` and `document` arguments, checks that the provider supports `operation`,
    /// runs `run`, and records the result as Evidence.
    Observe {
        operation: Operation,
        run: Observer,
    },
    /// Changes the session; no Evidence. Long work (opening) stops when the cancel is set.
    Change(Changer),
    /// Reads the session or the ledger; no Evidence.
    Read(Reader),
    /// Retains a document that no provider observed (an inventory page, an imported capture)
    /// as an unbound Evidence record: the [`super::ToolBox`] records `document` as the result
    /// and answers `reply` with the record's ID. Long work (a walk) stops when the cancel is
    /// set.
    Retain(Retainer),
    /// Reads the store's sessions rather than one session (`list_sessions`).
    Sessions(Lister),
    Across {
        operation: Operation,
        run: Comparer,
    },
}

/// What a [`Run::Retain`] tool keeps and answers.
pub(crate) struct Retained<R> {
    /// The Evidence result: the document exactly as retained.
    pub(crate) document: Value,
    /// The tool result, to which the ToolBox adds `evidence_id`.
    pub(crate) reply: R,
    /// The arguments to record, when not the arguments as given (a document retained as the
    /// result is not stored a second time among the arguments).
    pub(crate) recorded_arguments: Option<Map<String, Value>>,
}

impl Handler {
    /// An observation by `handler` of the target, for `operation`.
    pub(crate) fn observe<A: ToolArguments, R: ToolResult>(
        operation: Operation,
        handler: fn(&Target, A) -> Result<R, ToolError>,
    ) -> Handler {
        Handler {
            input: InputSchema::of::<A>,
            output: output_schema::<R>,
            run: Run::Observe {
                operation,
                run: Box::new(move |tool, target, arguments| {
                    encode_result(tool, &handler(target, decode(tool, arguments)?)?)
                }),
            },
        }
    }

    /// A session change by `handler`.
    pub(crate) fn change<A: ToolArguments, R: ToolResult>(
        handler: fn(&Session, A, &Cancel) -> Result<R, ToolError>,
    ) -> Handler {
        Handler {
            input: InputSchema::of::<A>,
            output: output_schema::<R>,
            run: Run::Change(Box::new(move |tool, session, arguments, cancel| {
                encode_result(tool, &handler(session, decode(tool, arguments)?, cancel)?)
            })),
        }
    }

    /// A read of the session by `handler`.
    pub(crate) fn read<A: ToolArguments, R: ToolResult>(
        handler: fn(&Session, A) -> Result<R, ToolError>,
    ) -> Handler {
        Handler {
            input: InputSchema::of::<A>,
            output: output_schema::<R>,
            run: Run::Read(Box::new(move |tool, session, arguments| {
                encode_result(tool, &handler(session, decode(tool, arguments)?)?)
            })),
        }
    }

    /// A tool whose `handler` retains a document as an unbound observation.
    /// A tool over the sessions of the store, on behalf of a client; it reads no session.
    pub(crate) fn sessions<A: ToolArguments, R: ToolResult>(
        handler: fn(&SessionStore, &ClientHandles, A) -> Result<R, ToolError>,
    ) -> Handler {
        Handler {
            input: InputSchema::of::<A>,
            output: output_schema::<R>,
            run: Run::Sessions(Box::new(move |tool, store, client, arguments| {
                encode_result(tool, &handler(store, client, decode(tool, arguments)?)?)
            })),
        }
    }

    pub(crate) fn across<A: ToolArguments, R: ToolResult>(
        operation: Operation,
        handler: fn(&SessionStore, Option<&str>, A, &Cancel) -> Result<Across, ToolError>,
    ) -> Handler {
        Handler {
            input: InputSchema::of::<A>,
            output: output_schema::<R>,
            run: Run::Across {
                operation,
                run: Box::new(move |tool, store, default, arguments, cancel| {
                    handler(store, default, decode(tool, arguments)?, cancel)
                }),
            },
        }
    }

    pub(crate) fn retain<A: ToolArguments, R: ToolResult>(
        handler: fn(&Session, A, &Cancel) -> Result<Retained<R>, ToolError>,
    ) -> Handler {
        Handler {
            input: InputSchema::of::<A>,
            output: output_schema::<R>,
            run: Run::Retain(Box::new(move |tool, session, arguments, cancel| {
                let retained = handler(session, decode(tool, arguments)?, cancel)?;
                Ok(Retained {
                    reply: encode_result(tool, &retained.reply)?,
                    document: retained.document,
                    recorded_arguments: retained.recorded_arguments,
                })
            })),
        }
    }
}

/// One catalog entry: the tool's definition and its handler.
pub(crate) struct ToolSpec {
    pub(crate) name: &'static str,
    pub(crate) title: &'static str,
    pub(crate) description: &'static str,
    pub(crate) annotations: ToolAnnotations,
    pub(crate) handler: Handler,
}

impl ToolSpec {
    /// The definition `tools/list` shows, with `input`, the schema made by the handler's
    /// `input`, and the output schema as `complete_output` completes it (with what the
    /// toolbox adds to this tool's results).
    pub(crate) fn definition(
        &self,
        input: &InputSchema,
        complete_output: impl FnOnce(&mut Value),
    ) -> ToolDefinition {
        let (kind, operation) = match self.handler.run {
            Run::Observe { operation, .. } | Run::Across { operation, .. } => {
                (ToolKind::Observation, Some(operation))
            }
            Run::Retain(_) => (ToolKind::Observation, None),
            Run::Change(_) => (ToolKind::SessionChange, None),
            Run::Read(_) | Run::Sessions(_) => (ToolKind::Read, None),
        };
        let mut output_schema = (self.handler.output)();
        if kind == ToolKind::Observation {
            output_schema = with_property(
                output_schema,
                EVIDENCE_ID_FIELD,
                string("ID of the Evidence record this call appended (cite it)."),
            );
        }
        if [OPEN_BINARY, CLOSE_BINARY].contains(&self.name) {
            output_schema = with_property(
                output_schema,
                SESSION_FIELD,
                string("The handle of the binary session: pass it as `session` to name it."),
            );
        }
        complete_output(&mut output_schema);
        let mut input_schema =
            with_optional_property(input.schema().clone(), SESSION, session_schema());
        // Whatever a builder or a published document wrote, `tools/list` carries no `type`
        // arrays (docs/CONTRACT.md section 11).
        single_types(&mut input_schema);
        single_types(&mut output_schema);
        ToolDefinition::new(DefinitionParts {
            name: self.name,
            title: self.title,
            description: self.description,
            input_schema,
            output_schema,
            annotations: self.annotations,
            kind,
            operation,
        })
    }
}

/// Serializes a tool result into the result object.
pub(crate) fn encode_result<R: Serialize>(
    tool: &'static str,
    result: &R,
) -> Result<ResultObject, ToolError> {
    match serde_json::to_value(result) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(ToolError::Encoding {
            tool,
            reason: "the result is not a JSON object".to_owned(),
        }),
        Err(error) => Err(ToolError::Encoding {
            tool,
            reason: error.to_string(),
        }),
    }
}

/// Serializes a session or provider value (a document to retain, ...).
pub(crate) fn encode<T: Serialize>(tool: &'static str, value: &T) -> Result<Value, ToolError> {
    serde_json::to_value(value).map_err(|error| ToolError::Encoding {
        tool,
        reason: error.to_string(),
    })
}

/// Deserializes checked arguments into the tool's argument type. Integral numbers written as
/// floats (`5.0`, which JSON Schema counts as integers) are read as integers.
pub(crate) fn decode<A: DeserializeOwned>(
    tool: &'static str,
    mut values: Map<String, Value>,
) -> Result<A, ToolError> {
    for value in values.values_mut() {
        if let Value::Number(number) = value
            && number.is_f64()
            && let Some(float) = number.as_f64()
            && float.fract() == 0.0
            && (0.0..=18_446_744_073_709_551_615.0).contains(&float)
        {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // integral, in range
            let integer = float as u64;
            *value = Value::from(integer);
        }
    }
    serde_json::from_value(Value::Object(values)).map_err(|error| ToolError::Decoding {
        tool,
        reason: error.to_string(),
    })
}
