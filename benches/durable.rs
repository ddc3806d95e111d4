//! What the durable store costs (docs/CONTRACT.md section 16), on the release server: the
//! latency of an observing call (`read_bytes`) over a SQLite store against `--store memory`
//! (p50 and p99 of 2,000 serial calls each, and the added cost), and the start-up time of a
//! server resuming a session of 30,000 records against one on an empty store (and what it
//! holds then, `VmHWM`), the same for a session of a 110 MB binary, and the records per
//! second 16 concurrent callers commit, each in its own session of one store.
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
const CALLERS: usize = 16;
const RECORDS_PER_CALLER: usize = 1_000;

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

/// Time from spawning `rea serve ARGS` to its answer to `initialize`, and the peak resident
/// memory (`VmHWM`, KiB) of the server then.
fn start_up(args: &[&std::ffi::OsStr]) -> (Duration, u64) {
    let started = Instant::now();
    let server = ServerProcess::start_with(REA, args);
    let elapsed = started.elapsed();
    let peak = server.status_kb("VmHWM:");
    drop(server);
    (elapsed, peak)
}

/// A store at `path` holding one session of `binary` (the session is admitted, so it is kept).
fn store_with(path: &Path, binary: &Path) -> Arc<rea::session::Session> {
    let durable = Arc::new(SqliteStore::open(path, StoreOptions::default()).unwrap());
    let sessions = SessionStore::with_durable(StoreConfig::default(), durable);
    let session = sessions.prepare().unwrap();
    rea::providers::open_path(&session, binary).unwrap();
    sessions.admit(Arc::clone(&session)).unwrap();
    session
}

/// Records per second that `CALLERS` threads commit at once, each in its own session of one
/// SQLite store (each record synced before the next call of its thread).
fn concurrent_commits(dir: &Path, binary: &Path) -> f64 {
    let durable = Arc::new(
        SqliteStore::open(&dir.join("concurrent.sqlite"), StoreOptions::default()).unwrap(),
    );
    let sessions = SessionStore::with_durable(
        StoreConfig {
            max_sessions: CALLERS,
            ..StoreConfig::default()
        },
        durable,
    );
    let opened: Vec<_> = (0..CALLERS)
        .map(|_| {
            let session = sessions.prepare().unwrap();
            rea::providers::open_path(&session, binary).unwrap();
            sessions.admit(Arc::clone(&session)).unwrap();
            session
        })
        .collect();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for session in &opened {
            scope.spawn(move || {
                for index in 0..RECORDS_PER_CALLER {
                    let observation = rea::session::Observation::unbound(
                        "read_bytes",
                        json!({"address": format!("{:#x}", 0x1000 + index), "length": 16}),
                        json!({"bytes": "00112233445566778899aabbccddeeff"}),
                    );
                    session.record_evidence(observation).unwrap();
                }
            });
        }
    });
    (CALLERS * RECORDS_PER_CALLER) as f64 / started.elapsed().as_secs_f64()
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

    let rate = concurrent_commits(dir.path(), &binary);
    println!(
        "{CALLERS} concurrent callers, {RECORDS_PER_CALLER} records each: {rate:.0} records/s"
    );

    // A session of RECORDS records, written through the library one by one.
    let large = dir.path().join("large.sqlite");
    {
        let session = store_with(&large, &binary);
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
    let (empty_start, empty_peak) = start_up(&["--store".as_ref(), empty.as_os_str()]);
    let (large_start, large_peak) = start_up(&["--store".as_ref(), large.as_os_str()]);
    println!(
        "start-up to initialize: empty store {empty_start:?} (VmHWM {empty_peak} KiB); a \
         session of {RECORDS} records {large_start:?} (resume {:?}, VmHWM {large_peak} KiB)",
        large_start.saturating_sub(empty_start)
    );

    // A session of a 110 MB binary, kept in the store; resumed after the file is gone, so
    // its bytes come from the store.
    let big = dir.path().join("big");
    let mut bytes = built.bytes.clone();
    bytes.resize(110 << 20, 0);
    std::fs::write(&big, &bytes).unwrap();
    drop(bytes);
    let kept = dir.path().join("big.sqlite");
    drop(store_with(&kept, &big));
    std::fs::remove_file(&big).unwrap();
    let (big_start, big_peak) = start_up(&["--store".as_ref(), kept.as_os_str()]);
    println!(
        "start-up to initialize with a session of a 110 MB binary read back from the store: \
         {big_start:?} (VmHWM {big_peak} KiB)"
    );
}
