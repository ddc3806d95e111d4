//! The real `rea serve` with eight binary sessions open and requests of both eras naming them:
//! threads, descriptors and resident memory stay under the stated caps (read from `/proc`),
//! a ninth session is refused by name, and each session answers for its own binary.

use crate::support::server_process::ServerProcess;
use crate::support::tools::{stripped_system_binary, system_libc, this_executable};
use serde_json::{Value, json};

/// The stated bounds (crate docs, "Execution model"; CONTRACT.md section 13).
const MAX_THREADS: u64 = 16;
const MAX_FDS: usize = 64;
const MAX_PEAK_KB: u64 = 512 * 1024;

fn modern(method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    json!({"method": method, "params": params})
}

#[test]
fn eight_sessions_and_both_eras_stay_inside_the_caps() {
    // Small system binaries (this test executable, the fallback, is hundreds of MB).
    let mut binaries: Vec<std::path::PathBuf> = [stripped_system_binary(), system_libc()]
        .into_iter()
        .flatten()
        .collect();
    if binaries.is_empty() {
        binaries.push(this_executable());
    }
    let mut server = ServerProcess::start(env!("CARGO_BIN_EXE_rea-under-test"));
    let mut handles = Vec::new();
    for index in 0..8 {
        let path = &binaries[index % binaries.len()];
        let opened = server.tool("open_binary", json!({"path": path}));
        assert_eq!(opened["isError"], false, "{opened}");
        handles.push((
            opened["structuredContent"]["session"]
                .as_str()
                .unwrap()
                .to_owned(),
            opened["structuredContent"]["current_document"].clone(),
        ));
    }
    let refused = server.tool("open_binary", json!({"path": binaries[0]}));
    assert_eq!(refused["isError"], true);
    assert!(
        refused["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("at most 8 binary sessions"),
        "{refused}"
    );

    // Every session answers for its own document, through both eras' completion.
    for (handle, document) in &handles {
        for request in [
            json!({"method": "completion/complete", "params": {
                "ref": {"type": "ref/prompt", "name": "investigate_feature"},
                "argument": {"name": "document", "value": ""},
                "context": {"arguments": {"session": handle}}}}),
            modern(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "investigate_feature"},
                       "argument": {"name": "document", "value": ""},
                       "context": {"arguments": {"session": handle}}}),
            ),
        ] {
            let id = server.send(
                request["method"].as_str().unwrap(),
                request["params"].clone(),
            );
            let answer = server.response(id);
            assert_eq!(
                answer["result"]["completion"]["values"],
                json!([document]),
                "{answer}"
            );
        }
        let segments = server.tool("list_segments", json!({"session": handle}));
        assert_eq!(segments["isError"], false, "{segments}");
    }

    let threads = server.status_kb("Threads:");
    let fds = server.open_fds();
    let peak = server.status_kb("VmHWM:");
    eprintln!("8 sessions: {threads} threads, {fds} descriptors, peak {peak} kB");
    assert!(threads <= MAX_THREADS, "{threads} threads");
    assert!(fds <= MAX_FDS, "{fds} descriptors");
    assert!(peak <= MAX_PEAK_KB, "peak {peak} kB");

    // Closing one leaves the other seven answering.
    let (closed, _) = &handles[0];
    let ended = server.tool("close_binary", json!({"session": closed}));
    assert_eq!(ended["isError"], false, "{ended}");
    for (handle, _) in &handles[1..] {
        let answer = server.tool("current_document", json!({"session": handle}));
        assert_eq!(answer["isError"], false, "{answer}");
    }
    let gone = server.tool("current_document", json!({"session": closed}));
    assert_eq!(gone["isError"], true);
}
