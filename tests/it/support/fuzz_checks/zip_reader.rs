//! Invariants of the zip inventory reader on arbitrary bytes (shared by the fuzz target and
//! `fuzz_replay::inventory`).

use std::io::Cursor;

use rea::session::inventory::{
    Inventory, InventoryError, InventoryLimits, PageSize, manifest_id_of, occurrence_id_for,
    parse_page,
};

/// Checks one input; panics when an invariant breaks.
pub fn check(data: &[u8]) {
    let limits = InventoryLimits {
        max_entries: 256,
        max_file_bytes: 1 << 20,
        max_total_bytes: 4 << 20,
        max_depth: 64,
    };
    let inventory = match Inventory::of_zip_reader(Cursor::new(data), "fuzz.zip", &limits) {
        Ok(inventory) => inventory,
        Err(error) => {
            assert!(matches!(
                error,
                InventoryError::NotAZip { .. }
                    | InventoryError::TooManyEntries { .. }
                    | InventoryError::TooManyBytes { .. }
            ));
            assert!(!error.to_string().is_empty());
            return;
        }
    };
    let occurrences = inventory.occurrences();
    assert!(occurrences.len() + inventory.rejected().len() <= limits.max_entries);
    assert!(
        occurrences
            .windows(2)
            .all(|pair| pair[0].path < pair[1].path)
    );
    let mut total = 0;
    for occurrence in occurrences {
        // Every inventoried path stays below the root.
        assert!(!occurrence.path.starts_with('/'));
        assert!(!occurrence.path.contains('\\') && !occurrence.path.contains('\0'));
        assert!(
            occurrence
                .path
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..")
        );
        assert!(occurrence.size <= limits.max_file_bytes);
        assert_eq!(occurrence.sha256.len(), 64);
        assert_eq!(
            occurrence.occurrence_id,
            occurrence_id_for(inventory.manifest_id(), &occurrence.path)
        );
        total += occurrence.size;
    }
    assert!(total <= limits.max_total_bytes);
    assert_eq!(
        inventory.manifest_id(),
        manifest_id_of(
            occurrences
                .iter()
                .map(|o| (o.path.as_str(), o.sha256.as_str()))
        )
    );
    let mut covered = 0;
    for page in inventory.pages(PageSize::new(7).unwrap()) {
        let document = serde_json::to_value(&page).unwrap();
        assert_eq!(parse_page(&document).unwrap(), page);
        covered += page.occurrences.len();
    }
    assert_eq!(covered, occurrences.len());
}
