//! Replays the saved inputs of the `strace_transcript` fuzz target through the same invariant
//! checks the target runs, and pins what the real transcript of a crash under bubblewrap says.

use rea::capture::trace::parse_trace;

fn inputs() -> Vec<(String, Vec<u8>)> {
    let dir = crate::root()
        .to_path_buf()
        .join("fuzz/regressions/strace_transcript");
    let mut inputs: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    inputs.sort();
    inputs
}

#[test]
fn strace_transcript_regressions_hold_their_invariants() {
    let inputs = inputs();
    assert!(inputs.len() >= 2);
    for (_, data) in &inputs {
        rea::fuzzing::session::check_transcript(data);
    }
    let (_, crash) = inputs
        .iter()
        .find(|(name, _)| name == "crash_under_bwrap.txt")
        .unwrap();
    let trace = parse_trace(crash, "/w/p");
    let fault = trace.fault.unwrap();
    assert_eq!(fault.signal, "SIGSEGV");
    assert_eq!(fault.address, Some(0));
    assert_eq!(fault.frames[0].symbol.as_deref(), Some("deep+0xc"));
    // Nothing of bwrap's own set-up (before the program's execve) is an event.
    assert_eq!(trace.events[0]["path"], "/w/p");
    assert_eq!(trace.processes_started, 0);
}
