//! Replays every saved input of the `jsonrpc_line` fuzz target through its invariant checks.

#[test]
fn saved_jsonrpc_line_inputs_keep_their_invariants() {
    let folder = crate::root().join("fuzz/regressions/jsonrpc_line");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&folder).expect("regression folder exists") {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        rea::fuzzing::mcp::check_server(&bytes);
        for line in bytes.split(|&b| b == b'\n') {
            rea::fuzzing::mcp::check_classification(line);
        }
        replayed += 1;
    }
    assert!(replayed >= 3, "the saved inputs are present");
}

/// The `jsonrpc_line` input found by a longer run outside CI: a batch member reusing the id of
/// `initialize` is answered under that id too, so the id is answered twice; the invariant now
/// counts batch members.
#[test]
fn a_batch_member_reusing_an_answered_id_is_not_a_lost_request() {
    let bytes =
        std::fs::read(crate::root().join("fuzz/regressions/jsonrpc_line/batch-id-reuse.jsonl"))
            .unwrap();
    rea::fuzzing::mcp::check_server(&bytes);
}

#[test]
fn saved_server_session_inputs_keep_their_invariants() {
    let folder = crate::root().join("fuzz/regressions/server_session");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&folder).expect("regression folder exists") {
        rea::fuzzing::mcp::check_session(&std::fs::read(entry.unwrap().path()).unwrap());
        replayed += 1;
    }
    assert!(replayed >= 3, "the saved inputs are present");
}
