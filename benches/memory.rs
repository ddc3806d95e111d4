//! Resident memory of the release server opening a 62.7 MiB catalog (1.6 million
//! procedures): once, then four at once, as docs/CONTRACT.md section 9 states the bounds (peak at most 4 and 8
//! times the file, memory given back after). Prints `VmHWM` and `VmRSS` growth in KiB and the
//! ratios to the file size. `cargo bench --bench memory`.

use rea_testkit::server_process;

use serde_json::json;
use server_process::{ServerProcess, write_catalogs};

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, bytes) = write_catalogs(dir.path(), 1_600_000, 4);
    let size = (bytes / 1024) as f64;
    let report = |what: &str, server: &ServerProcess, before: u64| {
        let peak = server.status_kb("VmHWM:") - before;
        let held = server.status_kb("VmRSS:") - before;
        println!(
            "{what}: peak +{peak} KiB ({:.2}x), held +{held} KiB ({:.2}x) for {size} KiB",
            peak as f64 / size,
            held as f64 / size
        );
    };
    let mut server = ServerProcess::start(env!("CARGO_BIN_EXE_rea"));
    let before = server.status_kb("VmRSS:");
    let opened = server.tool("open_binary", json!({"path": paths[0]}));
    assert_eq!(opened["isError"], json!(false), "{opened}");
    report("one open", &server, before);
    drop(server);

    let mut server = ServerProcess::start(env!("CARGO_BIN_EXE_rea"));
    let before = server.status_kb("VmRSS:");
    server.open_all(&paths);
    report("four concurrent opens", &server, before);
}
