//! The prompt registry: the listed catalog, updates that report whether it changed, and
//! cursor paging for `prompts/list`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::num::NonZeroUsize;

use serde::Serialize;

use super::availability::ToolAvailability;
use super::builtin::builtin_prompts;
use super::definition::{PromptDefinition, PromptListing};
use super::error::{DefinitionError, PromptError};
use super::render::{RenderedPrompt, render};
use crate::core::Family;
use crate::text::Quoted;

/// Page size of `prompts/list` when the server has no reason to pick another: large enough
/// that the six built-in prompts (and a few dozen of an integrator's) come in one page.
pub const DEFAULT_PAGE_SIZE: NonZeroUsize = NonZeroUsize::new(50).unwrap();

/// Marks the cursor format, so a cursor from another source is rejected rather than misread.
const CURSOR_PREFIX: &str = "after.";

/// Prompts in a stable listed order: built-ins first, then registrations in the order they
/// were first added. Updating a prompt keeps its place.
///
/// Lookups are linear; a registry holds a handful of prompts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PromptRegistry {
    prompts: Vec<PromptDefinition>,
}

/// What [`PromptRegistry::register`] did to the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegistryChange {
    /// A prompt of a new name was appended.
    Added,
    /// A prompt of this name existed and some field differed; it was replaced in place.
    Updated,
    /// A prompt identical in every field was already registered; nothing changed.
    Unchanged,
}

impl RegistryChange {
    /// Whether clients should be told (`notifications/prompts/list_changed`).
    ///
    /// Any difference counts, including the workflow and argument families that `prompts/list`
    /// does not show, since they change what `prompts/get` and completion answer.
    pub fn catalog_changed(self) -> bool {
        self != RegistryChange::Unchanged
    }
}

/// One page of `prompts/list`.
///
/// Serializes to the MCP `ListPromptsResult` shape: `{"prompts": [...], "nextCursor"?}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PromptPage<'a> {
    /// The prompts of this page, in listed order.
    pub prompts: Vec<PromptListing<'a>>,
    /// Opaque cursor of the next page; `None` on the last page.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// A `prompts/list` cursor this registry did not issue, or one whose position no longer
/// exists (the prompt it continues after was removed). The client should list from the start.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid prompts/list cursor {cursor:?}")]
pub struct InvalidCursor {
    /// The cursor as sent.
    pub cursor: Quoted,
}

impl PromptRegistry {
    /// An empty registry.
    pub fn new() -> PromptRegistry {
        PromptRegistry::default()
    }

    /// A registry holding the six [built-in prompts](builtin_prompts).
    pub fn with_builtin() -> PromptRegistry {
        PromptRegistry {
            prompts: builtin_prompts(),
        }
    }

    /// The prompt called `name`.
    pub fn get(&self, name: &str) -> Option<&PromptDefinition> {
        self.prompts.iter().find(|prompt| prompt.name == name)
    }

    /// All prompts, in listed order.
    pub fn list(&self) -> &[PromptDefinition] {
        &self.prompts
    }

    /// Adds `def`, or replaces the prompt of the same name in place.
    pub fn register(&mut self, def: PromptDefinition) -> Result<RegistryChange, DefinitionError> {
        def.validate()?;
        match self
            .prompts
            .iter_mut()
            .find(|prompt| prompt.name == def.name)
        {
            Some(existing) if *existing == def => Ok(RegistryChange::Unchanged),
            Some(existing) => {
                *existing = def;
                Ok(RegistryChange::Updated)
            }
            None => {
                self.prompts.push(def);
                Ok(RegistryChange::Added)
            }
        }
    }

    /// Removes the prompt called `name` and returns it; `None` (no change) if there was none.
    pub fn remove(&mut self, name: &str) -> Option<PromptDefinition> {
        let index = self.position(name)?;
        Some(self.prompts.remove(index))
    }

    /// Replaces the prompts one source (such as a prompt file) owns: `previous` names what the
    /// source registered last time, `definitions` what it holds now. Each definition is
    /// registered in order; then each prompt that left the source is restored to the built-in
    /// prompt of the same name if there is one, and removed otherwise. Returns whether the
    /// catalog changed. An invalid definition stops it with the error; what was registered
    /// before stays.
    pub fn sync_source(
        &mut self,
        previous: &[String],
        definitions: &[PromptDefinition],
    ) -> Result<bool, DefinitionError> {
        let mut changed = false;
        for definition in definitions {
            changed |= self.register(definition.clone())?.catalog_changed();
        }
        for name in previous {
            if definitions.iter().any(|d| &d.name == name) {
                continue;
            }
            match builtin_prompts().into_iter().find(|b| &b.name == name) {
                Some(builtin) => changed |= self.register(builtin)?.catalog_changed(),
                None => changed |= self.remove(name).is_some(),
            }
        }
        Ok(changed)
    }

    /// One page of at most `page_size` prompts, starting at `cursor` (`None` for the first
    /// page). A cursor continues after the last prompt of the page that issued it, so prompts
    /// added in between are listed; a cursor this registry cannot place is an error.
    pub fn page(
        &self,
        cursor: Option<&str>,
        page_size: NonZeroUsize,
    ) -> Result<PromptPage<'_>, InvalidCursor> {
        let start = match cursor {
            None => 0,
            Some(cursor) => self.cursor_start(cursor).ok_or_else(|| InvalidCursor {
                cursor: cursor.into(),
            })?,
        };
        let end = start
            .saturating_add(page_size.get())
            .min(self.prompts.len());
        let page = &self.prompts[start..end];
        let next_cursor = match page.last() {
            Some(last) if end < self.prompts.len() => Some(encode_cursor(&last.name)),
            _ => None,
        };
        Ok(PromptPage {
            prompts: page.iter().map(PromptDefinition::listing).collect(),
            next_cursor,
        })
    }

    /// The completion family of `argument` of `prompt`: `Ok(None)` for a free-text argument.
    pub fn argument_family(
        &self,
        prompt: &str,
        argument: &str,
    ) -> Result<Option<Family>, PromptError> {
        let def = self.require(prompt)?;
        def.argument(argument)
            .map(|found| found.family)
            .ok_or_else(|| PromptError::UnknownArgument {
                prompt: prompt.into(),
                argument: argument.into(),
            })
    }

    /// Renders the prompt called `name` (see [`render`]); an unknown name is an error.
    pub fn render(
        &self,
        name: &str,
        arguments: &BTreeMap<String, String>,
        tools: &ToolAvailability,
    ) -> Result<RenderedPrompt, PromptError> {
        render(self.require(name)?, arguments, tools)
    }

    fn require(&self, name: &str) -> Result<&PromptDefinition, PromptError> {
        self.get(name).ok_or_else(|| PromptError::UnknownPrompt {
            prompt: name.into(),
        })
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.prompts.iter().position(|prompt| prompt.name == name)
    }

    fn cursor_start(&self, cursor: &str) -> Option<usize> {
        let name = decode_cursor(cursor)?;
        self.position(&name).map(|index| index + 1)
    }
}

/// A cursor continuing after the prompt called `name`: the prefix and the name's UTF-8 bytes in
/// lowercase hex, so the cursor is plain ASCII whatever the name.
fn encode_cursor(name: &str) -> String {
    let mut cursor = String::from(CURSOR_PREFIX);
    for byte in name.bytes() {
        let _ = write!(cursor, "{byte:02x}");
    }
    cursor
}

fn decode_cursor(cursor: &str) -> Option<String> {
    let hex = cursor.strip_prefix(CURSOR_PREFIX)?.as_bytes();
    if hex.len() % 2 != 0 {
        return None;
    }
    let bytes = hex
        .chunks_exact(2)
        .map(|pair| Some(hex_digit(pair[0])? << 4 | hex_digit(pair[1])?))
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

/// The value of a lowercase hex digit (the only form [`encode_cursor`] writes).
fn hex_digit(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_any_name() {
        for name in ["investigate_feature", "", "é\u{2028}\"`"] {
            assert_eq!(decode_cursor(&encode_cursor(name)).as_deref(), Some(name));
        }
    }

    #[test]
    fn malformed_cursors_do_not_decode() {
        for cursor in [
            "", "after", "after.0", "after.zz", "after.AB", "after.ff", "x.00",
        ] {
            assert_eq!(decode_cursor(cursor), None, "{cursor:?}");
        }
    }
}
