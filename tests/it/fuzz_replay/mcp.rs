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

/// Set in the child processes of the test below: run the fuzzing server once, then return.
const FOLDER_CHILD: &str = "REA_FUZZ_FOLDER_CHILD";

/// The fuzzing server confines itself to an empty private folder that outlives its process;
/// the next process's server sweeps the folders of processes that are gone. Run through two
/// child processes of this test binary, one after the other (the server is one per process),
/// with `TMPDIR` set to a folder of this test.
#[test]
fn the_fuzzing_servers_folder_is_private_and_the_next_process_sweeps_it() {
    if std::env::var_os(FOLDER_CHILD).is_some() {
        rea::fuzzing::mcp::check_server(b"");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let temporary = tempfile::tempdir().expect("a temporary folder");
    let folders = || -> Vec<std::path::PathBuf> {
        let mut found: Vec<_> = std::fs::read_dir(temporary.path())
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                let name = path.file_name().unwrap().to_string_lossy();
                name.starts_with("rea-fuzz-empty-")
            })
            .collect();
        found.sort();
        found
    };
    let run_child = || {
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "fuzz_replay::mcp::the_fuzzing_servers_folder_is_private_and_the_next_process_sweeps_it",
                "--exact",
                "--test-threads=1",
                "--quiet",
            ])
            .env(FOLDER_CHILD, "1")
            .env("TMPDIR", temporary.path())
            .stdout(std::process::Stdio::null())
            .status()
            .expect("the test binary runs again");
        assert!(status.success(), "the child run failed: {status}");
    };
    run_child();
    let first = folders();
    assert_eq!(first.len(), 1, "one folder after one process: {first:?}");
    let mode = std::fs::metadata(&first[0]).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "private");
    let name = first[0].file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        name.trim_start_matches("rea-fuzz-empty-")
            .split('-')
            .count(),
        3,
        "named <pid>-<start>-<nonce>: {name}"
    );
    run_child();
    let second = folders();
    assert_eq!(
        second.len(),
        1,
        "the first process's folder swept: {second:?}"
    );
    assert_ne!(second, first, "the second process made its own");
}
