//! [`ToolSpec`]: one catalog entry, its [`Handler`], and what the tool files share. The tool
//! files and the [`super::ToolBox`] both import this file; it imports neither.

use serde::Serialize;
use serde_json::{Map, Value};

use super::definition::{DefinitionParts, ToolAnnotations, ToolDefinition, ToolKind};
use super::outcome::{EVIDENCE_ID_FIELD, ToolError};
use super::parameters::{Arguments, Parameter, input_schema};
use super::schema::{string, with_property};
use crate::session::{Cancel, Operation, Session, Target};

/// Runs one tool. The variant fixes the tool's [`ToolKind`], so a tool cannot observe without
/// recording Evidence, nor record Evidence without observing.
pub(crate) enum Handler {
    /// Observes the open binary: the [`super::ToolBox`] picks the target from the optional `provider`
    /// and `document` arguments, checks that the provider supports `operation`, runs `run`,
    /// and records the result as Evidence.
    Observe {
        operation: Operation,
        run: fn(&Target, &Arguments<'_>) -> Result<Value, ToolError>,
    },
    /// Changes the session; no Evidence.
    Change(fn(&Session, &Arguments<'_>) -> Result<Value, ToolError>),
    /// Reads the session or the ledger; no Evidence.
    Read(fn(&Session, &Arguments<'_>) -> Result<Value, ToolError>),
    /// Retains a document that no provider observed (an inventory page, an imported capture)
    /// as an unbound Evidence record: the [`super::ToolBox`] records `document` as the result and
    /// answers `reply` with the record's ID.
    Retain(fn(&Session, &Arguments<'_>, &Cancel) -> Result<Retained, ToolError>),
}

/// What a [`Handler::Retain`] tool keeps and answers.
pub(crate) struct Retained {
    /// The Evidence result: the document exactly as retained.
    pub(crate) document: Value,
    /// The tool result (an object), to which the ToolBox adds `evidence_id`.
    pub(crate) reply: Value,
    /// The arguments to record, when not the arguments as given (a document retained as the
    /// result is not stored a second time among the arguments).
    pub(crate) recorded_arguments: Option<Map<String, Value>>,
}

/// One catalog entry: the tool's definition and its handler.
pub(crate) struct ToolSpec {
    pub(crate) name: &'static str,
    pub(crate) title: &'static str,
    pub(crate) description: &'static str,
    pub(crate) parameters: &'static [Parameter],
    pub(crate) annotations: ToolAnnotations,
    /// The object schema of the result (without `evidence_id`, which is added for observations).
    pub(crate) output: fn() -> Value,
    pub(crate) handler: Handler,
}

impl ToolSpec {
    /// The definition `tools/list` shows.
    pub(crate) fn definition(&self) -> ToolDefinition {
        let (kind, operation) = match self.handler {
            Handler::Observe { operation, .. } => (ToolKind::Observation, Some(operation)),
            Handler::Retain(_) => (ToolKind::Observation, None),
            Handler::Change(_) => (ToolKind::SessionChange, None),
            Handler::Read(_) => (ToolKind::Read, None),
        };
        let mut output_schema = (self.output)();
        if kind == ToolKind::Observation {
            output_schema = with_property(
                output_schema,
                EVIDENCE_ID_FIELD,
                string("ID of the Evidence record this call appended (cite it)."),
            );
        }
        ToolDefinition::new(DefinitionParts {
            name: self.name,
            title: self.title,
            description: self.description,
            input_schema: input_schema(self.parameters),
            output_schema,
            annotations: self.annotations,
            kind,
            operation,
        })
    }
}

/// Serializes a session or provider value into a result field.
pub(crate) fn encode<T: Serialize>(tool: &'static str, value: &T) -> Result<Value, ToolError> {
    serde_json::to_value(value).map_err(|error| ToolError::Encoding {
        tool,
        reason: error.to_string(),
    })
}
