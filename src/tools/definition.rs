//! [`ToolDefinition`]: one tool as `tools/list` shows it (the MCP `Tool` shape).

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::session::Operation;

/// What a successful call of a tool does to the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Observes the open binary through its provider, or retains a document (an inventory
    /// page, a process capture), and appends one Evidence record, whose ID the result carries
    /// as `evidence_id`.
    Observation,
    /// Changes the session (opens, closes or selects); appends no Evidence.
    SessionChange,
    /// Reads the session or the Evidence ledger; changes nothing and appends no Evidence.
    Read,
}

impl fmt::Display for ToolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ToolKind::Observation => "observation",
            ToolKind::SessionChange => "session change",
            ToolKind::Read => "read",
        })
    }
}

/// The MCP tool annotations. They are hints for clients, never guarantees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// The tool does not modify its environment (the session counts as its environment).
    pub read_only_hint: bool,
    /// The tool may discard something (an open binary, the Evidence ledger).
    pub destructive_hint: bool,
    /// Repeating the call with the same arguments has no further effect.
    pub idempotent_hint: bool,
    /// The tool reaches beyond the server and the files it is pointed at (none of ours do).
    pub open_world_hint: bool,
}

impl ToolAnnotations {
    /// A tool that only reads.
    pub const READ_ONLY: ToolAnnotations = ToolAnnotations {
        read_only_hint: true,
        destructive_hint: false,
        idempotent_hint: true,
        open_world_hint: false,
    };
}

/// One tool of the catalog, serializable to the MCP `Tool` shape
/// `{name, title, description, inputSchema, outputSchema, annotations}`.
///
/// The input schema is a JSON Schema (2020-12) object schema with documented properties, a
/// `required` list and `additionalProperties: false`; the server checks arguments against the
/// same declaration. The output schema describes `structuredContent` of successful results.
/// [`ToolDefinition::kind`] and [`ToolDefinition::operation`] are not serialized.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDefinition {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    input_schema: Value,
    output_schema: Value,
    annotations: ToolAnnotations,
    kind: ToolKind,
    operation: Option<Operation>,
}

/// The parts of a [`ToolDefinition`], before it is assembled.
pub(crate) struct DefinitionParts {
    pub(crate) name: &'static str,
    pub(crate) title: &'static str,
    pub(crate) description: &'static str,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Value,
    pub(crate) annotations: ToolAnnotations,
    pub(crate) kind: ToolKind,
    pub(crate) operation: Option<Operation>,
}

impl ToolDefinition {
    pub(crate) fn new(parts: DefinitionParts) -> ToolDefinition {
        ToolDefinition {
            name: parts.name,
            title: parts.title,
            description: parts.description,
            input_schema: parts.input_schema,
            output_schema: parts.output_schema,
            annotations: parts.annotations,
            kind: parts.kind,
            operation: parts.operation,
        }
    }

    /// The tool's name, e.g. `list_procedures`.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// A short human-readable title.
    pub fn title(&self) -> &'static str {
        self.title
    }

    /// What the tool does, for the agent.
    pub fn description(&self) -> &'static str {
        self.description
    }

    /// The JSON Schema of the arguments.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The JSON Schema of `structuredContent` in a successful result.
    pub fn output_schema(&self) -> &Value {
        &self.output_schema
    }

    /// The MCP annotations.
    pub fn annotations(&self) -> ToolAnnotations {
        self.annotations
    }

    /// What a successful call does to the session.
    pub fn kind(&self) -> ToolKind {
        self.kind
    }

    /// The provider operation the tool performs, if it is backed by one: the tool is offered
    /// only when the current provider supports it.
    pub fn operation(&self) -> Option<Operation> {
        self.operation
    }

    /// The MCP `Tool` object.
    pub fn to_value(&self) -> Value {
        serde_json::json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": self.annotations,
        })
    }
}

impl Serialize for ToolDefinition {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}
