//! Invariants of the inventory page parser on arbitrary bytes (shared by the fuzz target and
//! `fuzz_replay::inventory`).

use rea::session::inventory::{occurrence_id_for, parse_page};
use serde_json::Value;

/// Checks one input; panics when an invariant breaks.
pub fn check(data: &[u8]) {
    let Ok(document) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    match parse_page(&document) {
        Ok(page) => {
            assert!(page.page.index < page.page.count);
            for occurrence in &page.occurrences {
                assert_eq!(
                    occurrence.occurrence_id,
                    occurrence_id_for(&page.manifest_id, &occurrence.path)
                );
                assert!(
                    occurrence
                        .path
                        .split('/')
                        .all(|c| !c.is_empty() && c != "." && c != "..")
                );
                assert!(!occurrence.path.contains('\0'));
            }
            // A valid page is exactly what the typed page serializes to.
            assert_eq!(serde_json::to_value(&page).unwrap(), document);
        }
        Err(invalid) => {
            assert!(document.pointer(&invalid.violation.pointer).is_some());
            assert!(!invalid.violation.message.is_empty());
        }
    }
}
