//! Replays every saved input of the `http_request` fuzz target through its invariant check.

#[test]
fn saved_http_request_inputs_keep_their_invariants() {
    let folder = crate::root().join("fuzz/regressions/http_request");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&folder).expect("regression folder exists") {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        rea::fuzzing::http::check_request(&bytes);
        replayed += 1;
    }
    assert!(replayed >= 5, "the saved inputs are present");
}
