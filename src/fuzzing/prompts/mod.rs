//! The prompt file parser's invariant (the `prompt_file` target), and in [`contract`] the
//! rendering contract (the `prompt_render` target and the rendering properties). The checks
//! panic when an invariant breaks.

pub mod contract;

use crate::prompts::{PromptRegistry, RegistryChange, parse_prompt_file};

/// Parsing never panics, and an accepted file yields valid, uniquely named definitions a
/// registry accepts.
pub fn check_prompt_file(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    if let Ok(definitions) = parse_prompt_file(text) {
        let mut registry = PromptRegistry::new();
        for definition in definitions {
            assert!(definition.validate().is_ok());
            assert_eq!(
                registry.register(definition),
                Ok(RegistryChange::Added),
                "names are unique"
            );
        }
    }
}
