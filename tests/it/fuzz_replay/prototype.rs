//! Replays the saved inputs of the `annotation_prototype` fuzz target through the same
//! invariant checks the target runs, and checks which of them the prototype check accepts.

#[test]
fn annotation_prototype_regressions_hold_their_invariants() {
    let dir = crate::root()
        .to_path_buf()
        .join("fuzz/regressions/annotation_prototype");
    let mut accepted = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        rea::fuzzing::session::check_prototype(&data);
        let ok = rea::annotations::check_declaration(&String::from_utf8_lossy(&data)).is_ok();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        accepted.push(format!("{name}: {ok}"));
    }
    accepted.sort();
    assert_eq!(
        accepted,
        [
            "body.txt: false",
            "nested.txt: false",
            "restrict_pointers.txt: true",
            "valid.txt: true"
        ]
    );
}
