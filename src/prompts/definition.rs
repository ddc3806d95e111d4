//! Prompt definitions and their MCP `Prompt` listing shape.

use std::collections::BTreeSet;

use serde::Serialize;

use super::error::DefinitionError;
use crate::core::Family;

/// A guided prompt: what `prompts/list` lists, what `prompts/get` renders and which argument
/// families `completion/complete` completes.
///
/// Fields are owned and public so integrators can build and register their own prompts; the
/// registry checks them with [`PromptDefinition::validate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptDefinition {
    /// Unique prompt name, the `name` of `prompts/get`.
    pub name: String,
    /// Human-readable title.
    pub title: String,
    /// What the prompt is for; also the `description` of the rendered result.
    pub description: String,
    /// Arguments in listed order.
    pub arguments: Vec<ArgumentDefinition>,
    /// Tool names the workflow offers, in order. A rendering lists only those currently
    /// available (see [`ToolAvailability`](super::ToolAvailability)).
    pub workflow: Vec<String>,
}

/// One argument of a [`PromptDefinition`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgumentDefinition {
    /// Argument name, unique within its prompt.
    pub name: String,
    /// What the argument means; for a completed argument it also says which family completes it.
    pub description: String,
    /// Whether `prompts/get` rejects a request without it.
    pub required: bool,
    /// The completion family, or `None` for free text (completion answers an empty result).
    pub family: Option<Family>,
}

impl PromptDefinition {
    /// The argument called `name`, if the prompt has one.
    pub fn argument(&self, name: &str) -> Option<&ArgumentDefinition> {
        self.arguments.iter().find(|argument| argument.name == name)
    }

    /// The MCP `Prompt` view of this definition, as `prompts/list` serializes it.
    pub fn listing(&self) -> PromptListing<'_> {
        PromptListing {
            name: &self.name,
            title: &self.title,
            description: &self.description,
            arguments: self
                .arguments
                .iter()
                .map(|argument| ArgumentListing {
                    name: &argument.name,
                    description: &argument.description,
                    required: argument.required,
                })
                .collect(),
        }
    }

    /// Checks what the registry relies on: a non-empty prompt name and non-empty, distinct
    /// argument names.
    pub fn validate(&self) -> Result<(), DefinitionError> {
        if self.name.is_empty() {
            return Err(DefinitionError::EmptyPromptName);
        }
        let mut seen = BTreeSet::new();
        for argument in &self.arguments {
            if argument.name.is_empty() {
                return Err(DefinitionError::EmptyArgumentName {
                    prompt: self.name.as_str().into(),
                });
            }
            if !seen.insert(argument.name.as_str()) {
                return Err(DefinitionError::DuplicateArgument {
                    prompt: self.name.as_str().into(),
                    argument: argument.name.as_str().into(),
                });
            }
        }
        Ok(())
    }
}

/// The MCP `Prompt` object of `prompts/list`: name, title, description and arguments. The
/// workflow and argument families stay server-side.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PromptListing<'a> {
    /// Prompt name.
    pub name: &'a str,
    /// Human-readable title.
    pub title: &'a str,
    /// What the prompt is for.
    pub description: &'a str,
    /// Arguments in listed order.
    pub arguments: Vec<ArgumentListing<'a>>,
}

/// The MCP `PromptArgument` object: name, description and whether it is required.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ArgumentListing<'a> {
    /// Argument name.
    pub name: &'a str,
    /// What the argument means.
    pub description: &'a str,
    /// Whether the prompt requires it.
    pub required: bool,
}
