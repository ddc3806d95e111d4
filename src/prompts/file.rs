//! Prompt files: integrator prompts as JSON, loaded by `rea serve --prompt-file`.
//!
//! ```json
//! [{
//!   "name": "triage_sample",
//!   "title": "Triage a sample",
//!   "description": "First look at an unknown sample.",
//!   "arguments": [
//!     { "name": "goal", "description": "What to find out.", "required": true },
//!     { "name": "document", "description": "Document (completed from Document).", "family": "document" }
//!   ],
//!   "workflow": ["list_documents", "list_procedures", "get_evidence"]
//! }]
//! ```
//!
//! Families are `document`, `procedure`, `provider`, `evidence`, `process_capture`,
//! `artifact_manifest`, `artifact_occurrence` and `residual_unknown`; `required` defaults to
//! `false`, `arguments` and `workflow` to empty. Unknown fields are rejected.

use serde::Deserialize;

use super::definition::{ArgumentDefinition, PromptDefinition};
use super::error::DefinitionError;
use crate::core::Family;

/// Why a prompt file was rejected.
#[derive(Debug, thiserror::Error)]
pub enum PromptFileError {
    /// The file is not a JSON array of prompt objects of the documented shape; the message
    /// names the offending field and position.
    #[error("prompt file is malformed: {0}")]
    Malformed(#[from] serde_json::Error),
    /// A prompt in the file is not a valid definition.
    #[error("prompt file entry {index} is invalid: {source}")]
    Invalid {
        /// Position of the entry in the file, from 0.
        index: usize,
        /// What is wrong with it.
        source: DefinitionError,
    },
    /// Two entries share a name.
    #[error("prompt file names prompt {name:?} twice")]
    DuplicateName {
        /// The repeated name.
        name: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PromptEntry {
    name: String,
    title: String,
    description: String,
    #[serde(default)]
    arguments: Vec<ArgumentEntry>,
    #[serde(default)]
    workflow: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ArgumentEntry {
    name: String,
    description: String,
    #[serde(default)]
    required: bool,
    #[serde(default)]
    family: Option<Family>,
}

/// Parses a prompt file into validated definitions, in file order.
pub fn parse_prompt_file(text: &str) -> Result<Vec<PromptDefinition>, PromptFileError> {
    let entries: Vec<PromptEntry> = serde_json::from_str(text)?;
    let mut definitions: Vec<PromptDefinition> = Vec::with_capacity(entries.len());
    for (index, entry) in entries.into_iter().enumerate() {
        let definition = PromptDefinition {
            name: entry.name,
            title: entry.title,
            description: entry.description,
            arguments: entry
                .arguments
                .into_iter()
                .map(|argument| ArgumentDefinition {
                    name: argument.name,
                    description: argument.description,
                    required: argument.required,
                    family: argument.family,
                })
                .collect(),
            workflow: entry.workflow,
        };
        definition
            .validate()
            .map_err(|source| PromptFileError::Invalid { index, source })?;
        if definitions.iter().any(|d| d.name == definition.name) {
            return Err(PromptFileError::DuplicateName {
                name: definition.name,
            });
        }
        definitions.push(definition);
    }
    Ok(definitions)
}
