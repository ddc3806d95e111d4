//! Replays the saved inputs of the `store_rows` fuzz target through the same invariant checks
//! the target runs, and checks which of them decode.

use rea::session::durable::rows::{RecordRow, decode_annotation, decode_record};

#[test]
fn store_rows_regressions_hold_their_invariants() {
    let dir = crate::root()
        .to_path_buf()
        .join("fuzz/regressions/store_rows");
    let mut decoded = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        rea::fuzzing::session::check_store_rows(&data);
        let text = String::from_utf8_lossy(&data).into_owned();
        let columns: Vec<&str> = text.split('\0').collect();
        let row = RecordRow {
            id: columns[0],
            sequence: columns[1].parse().unwrap_or(1),
            operation: columns[2],
            arguments: columns[3],
            result: columns[4],
            provider: None,
            document: None,
        };
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let annotation = match (columns.get(10), columns.get(11)) {
            (Some(id), Some(revision)) => decode_annotation(id, revision).is_ok(),
            _ => false,
        };
        decoded.push(format!(
            "{name}: {} {annotation}",
            decode_record(row).is_ok()
        ));
    }
    decoded.sort();
    assert_eq!(
        decoded,
        [
            "annotation_row.bin: true true",
            "refused_rows.bin: false false",
            "valid_rows.bin: true false"
        ]
    );
}
