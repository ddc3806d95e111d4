//! [`ToolSpec`]: one catalog entry, its [`Handler`], and what the tool files share. The tool
//! files and the [`super::ToolBox`] both import this file; it imports neither.
//!
//! A handler is a plain function from its typed arguments (declared with
//! [`tool_arguments!`](super::parameters::tool_arguments)) to its typed result (a
//! [`ToolResult`]); the [`observe!`], [`change!`], [`read!`] and [`retain!`] macros wrap it
//! into a [`Handler`], taking its parameter table from the argument type and its output schema
//! from the result type, so neither is written a second time.

use serde::Serialize;
use serde_json::{Map, Value};

use super::definition::{DefinitionParts, ToolAnnotations, ToolDefinition, ToolKind};
use super::outcome::{EVIDENCE_ID_FIELD, ToolError};
use super::parameters::{
    Arguments, FromArguments, Parameter, SESSION, input_schema, session_schema,
};
use super::schema::{string, with_optional_property, with_property};
use crate::session::{Cancel, Operation, Session, Target};

/// A tool's result: serialized as the `structuredContent` object, described by
/// [`ToolResult::output_schema`] (without `evidence_id`, which observations add). Implement it
/// right below the result type.
pub(crate) trait ToolResult: Serialize {
    /// The JSON Schema of the serialized result: every field listed, required, and no other.
    fn output_schema() -> Value;
}

/// The tool that opens a binary, and a binary session when it names none.
pub(crate) const OPEN_BINARY: &str = "open_binary";

/// The tool that closes a binary session and ends it.
pub(crate) const CLOSE_BINARY: &str = "close_binary";

/// The result field of [`OPEN_BINARY`] and [`CLOSE_BINARY`] that names the session.
pub(crate) const SESSION_FIELD: &str = "session";

/// A result object, as the [`super::ToolBox`] sends and records it.
pub(crate) type ResultObject = Map<String, Value>;

/// Runs one tool: its parameters, the schema of its result, and how it runs.
pub(crate) struct Handler {
    /// The parameters, from the handler's typed argument struct.
    pub(crate) parameters: &'static [Parameter],
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
        run: fn(&Target, &Arguments<'_>) -> Result<ResultObject, ToolError>,
    },
    /// Changes the session; no Evidence. Long work (opening) stops when the cancel is set.
    Change(fn(&Session, &Arguments<'_>, &Cancel) -> Result<ResultObject, ToolError>),
    /// Reads the session or the ledger; no Evidence.
    Read(fn(&Session, &Arguments<'_>) -> Result<ResultObject, ToolError>),
    /// Retains a document that no provider observed (an inventory page, an imported capture)
    /// as an unbound Evidence record: the [`super::ToolBox`] records `document` as the result
    /// and answers `reply` with the record's ID. Long work (a walk) stops when the cancel is
    /// set.
    Retain(fn(&Session, &Arguments<'_>, &Cancel) -> Result<Retained<ResultObject>, ToolError>),
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
    /// An observation over `_handler`'s arguments and result (see [`observe!`]).
    pub(crate) const fn observe<'a, A: FromArguments<'a>, R: ToolResult>(
        _handler: fn(&Target, A) -> Result<R, ToolError>,
        operation: Operation,
        run: fn(&Target, &Arguments<'_>) -> Result<ResultObject, ToolError>,
    ) -> Handler {
        Handler {
            parameters: A::PARAMETERS,
            output: R::output_schema,
            run: Run::Observe { operation, run },
        }
    }

    /// A session change over `_handler`'s arguments and result (see [`change!`]).
    pub(crate) const fn change<'a, A: FromArguments<'a>, R: ToolResult>(
        _handler: fn(&Session, A, &Cancel) -> Result<R, ToolError>,
        run: fn(&Session, &Arguments<'_>, &Cancel) -> Result<ResultObject, ToolError>,
    ) -> Handler {
        Handler {
            parameters: A::PARAMETERS,
            output: R::output_schema,
            run: Run::Change(run),
        }
    }

    /// A read over `_handler`'s arguments and result (see [`read!`]).
    pub(crate) const fn read<'a, A: FromArguments<'a>, R: ToolResult>(
        _handler: fn(&Session, A) -> Result<R, ToolError>,
        run: fn(&Session, &Arguments<'_>) -> Result<ResultObject, ToolError>,
    ) -> Handler {
        Handler {
            parameters: A::PARAMETERS,
            output: R::output_schema,
            run: Run::Read(run),
        }
    }

    /// A retaining tool over `_handler`'s arguments and result (see [`retain!`]).
    pub(crate) const fn retain<'a, A: FromArguments<'a>, R: ToolResult>(
        _handler: fn(&Session, A, &Cancel) -> Result<Retained<R>, ToolError>,
        run: fn(&Session, &Arguments<'_>, &Cancel) -> Result<Retained<ResultObject>, ToolError>,
    ) -> Handler {
        Handler {
            parameters: A::PARAMETERS,
            output: R::output_schema,
            run: Run::Retain(run),
        }
    }
}

/// `observe!(Operation::X, handler)`: a [`Run::Observe`] handler from
/// `fn(&Target, Arguments) -> Result<impl ToolResult, ToolError>`.
macro_rules! observe {
    ($operation:expr, $handler:path) => {
        $crate::tools::spec::Handler::observe($handler, $operation, |target, arguments| {
            let result = $handler(target, arguments.typed()?)?;
            $crate::tools::spec::encode_result(arguments.tool(), &result)
        })
    };
}
pub(crate) use observe;

/// `change!(handler)`: a [`Run::Change`] handler from
/// `fn(&Session, Arguments, &Cancel) -> Result<impl ToolResult, ToolError>`.
macro_rules! change {
    ($handler:path) => {
        $crate::tools::spec::Handler::change($handler, |session, arguments, cancel| {
            let result = $handler(session, arguments.typed()?, cancel)?;
            $crate::tools::spec::encode_result(arguments.tool(), &result)
        })
    };
}
pub(crate) use change;

/// `read!(handler)`: a [`Run::Read`] handler from
/// `fn(&Session, Arguments) -> Result<impl ToolResult, ToolError>`.
macro_rules! read {
    ($handler:path) => {
        $crate::tools::spec::Handler::read($handler, |session, arguments| {
            let result = $handler(session, arguments.typed()?)?;
            $crate::tools::spec::encode_result(arguments.tool(), &result)
        })
    };
}
pub(crate) use read;

/// `retain!(handler)`: a [`Run::Retain`] handler from
/// `fn(&Session, Arguments, &Cancel) -> Result<Retained<impl ToolResult>, ToolError>`.
macro_rules! retain {
    ($handler:path) => {
        $crate::tools::spec::Handler::retain($handler, |session, arguments, cancel| {
            let retained = $handler(session, arguments.typed()?, cancel)?;
            Ok($crate::tools::spec::Retained {
                reply: $crate::tools::spec::encode_result(arguments.tool(), &retained.reply)?,
                document: retained.document,
                recorded_arguments: retained.recorded_arguments,
            })
        })
    };
}
pub(crate) use retain;

/// One catalog entry: the tool's definition and its handler.
pub(crate) struct ToolSpec {
    pub(crate) name: &'static str,
    pub(crate) title: &'static str,
    pub(crate) description: &'static str,
    pub(crate) annotations: ToolAnnotations,
    pub(crate) handler: Handler,
}

impl ToolSpec {
    /// The definition `tools/list` shows.
    pub(crate) fn definition(&self) -> ToolDefinition {
        let (kind, operation) = match self.handler.run {
            Run::Observe { operation, .. } => (ToolKind::Observation, Some(operation)),
            Run::Retain(_) => (ToolKind::Observation, None),
            Run::Change(_) => (ToolKind::SessionChange, None),
            Run::Read(_) => (ToolKind::Read, None),
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
        let input_schema = with_optional_property(
            input_schema(self.handler.parameters),
            SESSION.name,
            session_schema(),
        );
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
