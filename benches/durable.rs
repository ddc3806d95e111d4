//! What the durable store costs (docs/CONTRACT.md section 16), on the release server: the
//! latency of an observing call (`read_bytes`) over a SQLite store against `--store memory`
//! (p50 and p99 of 2,000 serial calls each, and the added cost), and the start-up time of a
//! server resuming a session of 30,000 records against one on an empty store.
//! `cargo bench --bench durable`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rea::session::{SessionStore, SqliteStore, StoreConfig, StoreOptions};
use rea_testkit::fixtures::{Format, Spec, build};
use rea_testkit::server_process::ServerProcess;
use serde_json::json;

const REA: &str = env!("CARGO_BIN_EXE_rea");
const CALLS: usize = 2_000;
const RECORDS: usize = 30_000;

fn percentile(sorted: &[Duration], at: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * at).round() as usize]
}

/// p50 and p99 of `CALLS` serial `read_bytes` calls on `rea serve --store STORE --open BINARY`.
fn latencies(store: &str, binary: &Path, address: u64) -> (Duration, Duration) {
    let mut server = ServerProcess::start_with(
        REA,
        [
            "--store".as_ref(),
            store.as_ref(),
            "--open".as_ref(),
            binary.as_os_str(),
        ],
    );
    let arguments = json!({"address": format!("{address:#x}"), "length": 16});
    for _ in 0..100 {
        server.tool("read_bytes", arguments.clone());
    }
    let mut times: Vec<Duration> = (0..CALLS)
        .map(|_| {
            let started = Instant::now();
            let result = server.tool("read_bytes", arguments.clone());
            assert_eq!(result["isError"], json!(false), "{result}");
            started.elapsed()
        })
        .collect();
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.99))
}

/// Time from spawning `rea serve ARGS` to its answer to `initialize`.
fn start_up(args: &[&std::ffi::OsStr]) -> Duration {
    let started = Instant::now();
    let server = ServerProcess::start_with(REA, args);
    let elapsed = started.elapsed();
    drop(server);
    elapsed
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let built = build(&Spec::sample(), Format::Elf);
    let binary = dir.path().join("sample");
    std::fs::write(&binary, &built.bytes).unwrap();

    let (memory_p50, memory_p99) = latencies("memory", &binary, built.text_address);
    let store = dir.path().join("calls.sqlite");
    let (store_p50, store_p99) = latencies(store.to_str().unwrap(), &binary, built.text_address);
    println!(
        "read_bytes, {CALLS} serial calls: memory p50 {memory_p50:?} p99 {memory_p99:?}; \
         SQLite p50 {store_p50:?} p99 {store_p99:?}; added p50 {:?} p99 {:?}",
        store_p50.saturating_sub(memory_p50),
        store_p99.saturating_sub(memory_p99)
    );

    // A session of RECORDS records, written through the library in batches.
    let large = dir.path().join("large.sqlite");
    {
        let durable = Arc::new(SqliteStore::open(&large, StoreOptions::default()).unwrap());
        let sessions = SessionStore::with_durable(StoreConfig::default(), durable);
        let session = sessions.prepare().unwrap();
        rea::providers::open_path(&session, &binary).unwrap();
        sessions.admit(Arc::clone(&session)).unwrap();
        let started = Instant::now();
        for index in 0..RECORDS {
            let observation = rea::session::Observation::unbound(
                "read_bytes",
                json!({"address": format!("{:#x}", 0x1000 + index), "length": 16}),
                json!({"bytes": "00112233445566778899aabbccddeeff", "index": index}),
            );
            session.record_evidence(observation).unwrap();
        }
        println!(
            "{RECORDS} records committed one by one in {:?}",
            started.elapsed()
        );
    }
    let empty = dir.path().join("empty.sqlite");
    let empty_start = start_up(&["--store".as_ref(), empty.as_os_str()]);
    let large_start = start_up(&["--store".as_ref(), large.as_os_str()]);
    println!(
        "start-up to initialize: empty store {empty_start:?}; a session of {RECORDS} records \
         {large_start:?} (resume {:?})",
        large_start.saturating_sub(empty_start)
    );
}
