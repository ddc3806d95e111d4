//! Replays every saved input of the `jsonrpc_line` fuzz target through its invariant checks.

use std::path::Path;

#[test]
fn saved_jsonrpc_line_inputs_keep_their_invariants() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/jsonrpc_line");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&folder).expect("regression folder exists") {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        rea::mcp::fuzzing::check_server(&bytes);
        for line in bytes.split(|&b| b == b'\n') {
            rea::mcp::fuzzing::check_classification(line);
        }
        replayed += 1;
    }
    assert!(replayed >= 3, "the saved inputs are present");
}
