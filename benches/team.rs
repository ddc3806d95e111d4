//! The team server under load (README "A team server", docs/CONTRACT.md section 16): three `rea serve --http`
//! instances on one PostgreSQL (a temporary cluster this bench starts, on a Unix socket),
//! 16 concurrent 2026-07-28 clients, each with a session of its own, sending every request to
//! the next instance in turn (a round-robin load balancer), each alternating an observing call
//! (`list_documents`, an Evidence record) with a completion of the Evidence IDs
//! (`verify_reconstruction`'s `evidence`); against one instance on a SQLite store. Checks
//! that every answer's record arrives once in the ledger and that completion offers the
//! record answered just before, through another instance; prints p50 and p99 of both calls.
//! `cargo bench --bench team` (PostgreSQL 15 in `/usr/lib/postgresql/15/bin`, or `REA_PG_BIN`).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rea_testkit::fixtures::{Format, Spec, build};
use rea_testkit::team::{Cluster, Instance, call, listed_evidence, tool};
use serde_json::json;

const REA: &str = env!("CARGO_BIN_EXE_rea");
const CLIENTS: usize = 16;
const ROUNDS: usize = 60;

fn percentile(sorted: &[Duration], at: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * at).round() as usize]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Runs the workload over `addrs`; (observing, completing) latencies, sorted.
fn workload(addrs: &[SocketAddr], binary: &std::path::Path) -> (Vec<Duration>, Vec<Duration>) {
    let results: Vec<(Vec<Duration>, Vec<Duration>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..CLIENTS)
            .map(|client| {
                scope.spawn(move || {
                    let mut turn = client;
                    let mut next = || {
                        turn += 1;
                        addrs[turn % addrs.len()]
                    };
                    let opened = tool(next(), "open_binary", json!({"path": binary}));
                    assert_eq!(opened["isError"], json!(false), "{opened}");
                    let handle = opened["structuredContent"]["session"]
                        .as_str()
                        .unwrap()
                        .to_owned();
                    let (mut observing, mut completing) = (Vec::new(), Vec::new());
                    let mut answered = Vec::new();
                    for _ in 0..ROUNDS {
                        let started = Instant::now();
                        let result = tool(next(), "list_documents", json!({"session": handle}));
                        observing.push(started.elapsed());
                        assert_eq!(result["isError"], json!(false), "{result}");
                        let id = result["structuredContent"]["evidence_id"]
                            .as_str()
                            .unwrap()
                            .to_owned();
                        let started = Instant::now();
                        let answer = call(
                            next(),
                            "completion/complete",
                            json!({"ref": {"type": "ref/prompt", "name": "verify_reconstruction"},
                                   "argument": {"name": "evidence", "value": &id[..id.len() - 2]},
                                   "context": {"arguments": {"session": handle}}}),
                        );
                        completing.push(started.elapsed());
                        let values = answer["result"]["completion"]["values"]
                            .as_array()
                            .unwrap_or_else(|| panic!("{answer}"));
                        assert!(
                            values.iter().any(|value| value == id.as_str()),
                            "completion on another instance offers {id}: {answer}"
                        );
                        answered.push(id);
                    }
                    let listed = listed_evidence(next(), &handle);
                    let held: BTreeSet<&String> = listed.iter().collect();
                    assert_eq!(held.len(), listed.len(), "no duplicate");
                    assert!(listed.is_sorted(), "in order");
                    for id in &answered {
                        assert!(held.contains(id), "{id} arrived");
                    }
                    assert_eq!(listed.len(), ROUNDS, "each answer once, nothing else");
                    (observing, completing)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let (mut observing, mut completing): (Vec<Duration>, Vec<Duration>) = (Vec::new(), Vec::new());
    for (o, c) in results {
        observing.extend(o);
        completing.extend(c);
    }
    observing.sort();
    completing.sort();
    (observing, completing)
}

fn report(name: &str, (observing, completing): &(Vec<Duration>, Vec<Duration>)) {
    println!(
        "{name:<34} observing p50 {:>7.2} ms  p99 {:>7.2} ms | completing p50 {:>7.2} ms  p99 {:>7.2} ms  ({} calls each)",
        ms(percentile(observing, 0.5)),
        ms(percentile(observing, 0.99)),
        ms(percentile(completing, 0.5)),
        ms(percentile(completing, 0.99)),
        observing.len()
    );
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("sample");
    std::fs::write(&binary, build(&Spec::sample(), Format::Elf).bytes).unwrap();
    let sessions = (CLIENTS + 1).to_string();

    let sqlite = dir.path().join("store.sqlite");
    let single = Instance::start(
        REA,
        sqlite.to_str().unwrap(),
        &["--max-sessions", &sessions],
    );
    let alone = workload(&[single.addr], &binary);
    drop(single);

    let cluster = Cluster::start_synced();
    let url = cluster.url(&cluster.database("bench"));
    let team: Vec<Instance> = (0..3)
        .map(|_| Instance::start(REA, &url, &["--max-sessions", &sessions]))
        .collect();
    let addrs: Vec<SocketAddr> = team.iter().map(|i| i.addr).collect();
    let shared = workload(&addrs, &binary);

    println!("{CLIENTS} concurrent 2026 clients, {ROUNDS} rounds each (observe, then complete):");
    report("1 instance, SQLite store", &alone);
    report("3 instances round-robin, PostgreSQL", &shared);
}
