//! A team server (docs/CONTRACT.md section 16): several `rea serve --http`
//! instances on one real PostgreSQL, which these tests start themselves (a temporary cluster
//! on a Unix socket, one database per test, stopped when the suite ends). A session opened
//! through one instance is served through the others by its handle; appends through several
//! interleave with no loss, duplicate or reordering; completion on any instance sees every
//! answered record; a SIGKILLed instance loses nothing answered; a stopped database is an
//! error naming the store, and service comes back with the database, without a restart.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::OnceLock;

use crate::support::fixtures::{Format, Spec, build};
use rea_testkit::team::{
    Cluster, Instance, completed_evidence, listed_evidence, refused_start, tool, try_call,
};
use serde_json::{Value, json};

const REA: &str = env!("CARGO_BIN_EXE_rea-under-test");

/// The cluster the tests of this binary share (each in a database of its own).
fn cluster() -> &'static Cluster {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    CLUSTER.get_or_init(Cluster::start)
}

fn structured(result: &Value) -> &Value {
    assert_eq!(result["isError"], json!(false), "{result}");
    &result["structuredContent"]
}

fn error_text(result: &Value) -> String {
    assert_eq!(result["isError"], json!(true), "{result}");
    result["content"][0]["text"].as_str().unwrap().to_owned()
}

/// A sample binary in `dir`; its path.
fn sample(dir: &std::path::Path) -> std::path::PathBuf {
    let binary = dir.join("sample");
    std::fs::write(&binary, build(&Spec::sample(), Format::Elf).bytes).unwrap();
    binary
}

/// Opens `binary` through `addr` (which records nothing); the handle.
fn open(addr: SocketAddr, binary: &std::path::Path) -> String {
    let opened = tool(addr, "open_binary", json!({"path": binary}));
    structured(&opened)["session"].as_str().unwrap().to_owned()
}

/// One observation in session `handle` through `addr`; its Evidence ID.
fn observe(addr: SocketAddr, handle: &str) -> String {
    let listed = tool(addr, "list_documents", json!({"session": handle}));
    structured(&listed)["evidence_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn snapshot(name: &str, text: String) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn a_session_opened_through_one_instance_is_served_by_every_other_with_every_record() {
    let cluster = cluster();
    let url = cluster.url(&cluster.database("served"));
    // Started at once on an empty database: the migrations run once, under their lock.
    let instances: Vec<Instance> = std::thread::scope(|scope| {
        let starting: Vec<_> = (0..3)
            .map(|_| scope.spawn(|| Instance::start(REA, &url, &[])))
            .collect();
        starting.into_iter().map(|s| s.join().unwrap()).collect()
    });
    let addrs: Vec<SocketAddr> = instances.iter().map(|i| i.addr).collect();
    let dir = tempfile::tempdir().unwrap();
    let binary = sample(dir.path());
    let handle = open(addrs[0], &binary);
    // From now on the binary's bytes come from the database: the file is gone.
    std::fs::remove_file(&binary).unwrap();

    // Four clients append at once, each call to the next instance in turn.
    let answered: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|client| {
                let (addrs, handle) = (&addrs, &handle);
                scope.spawn(move || {
                    (0..6)
                        .map(|call| observe(addrs[(client + call) % addrs.len()], handle))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().unwrap())
            .collect()
    });
    let unique: BTreeSet<&String> = answered.iter().collect();
    assert_eq!(
        unique.len(),
        24,
        "every answer has its own ID: {answered:?}"
    );

    // Every instance lists the same ledger: every answered record once, in ID order, and
    // completion on each offers every one of them on its next request.
    let first = listed_evidence(addrs[0], &handle);
    for &addr in &addrs {
        let listed = listed_evidence(addr, &handle);
        assert_eq!(listed, first, "every instance holds one ledger");
        assert!(
            listed.is_sorted(),
            "IDs increase along the ledger: {listed:?}"
        );
        let held: BTreeSet<&String> = listed.iter().collect();
        assert_eq!(held.len(), listed.len(), "no duplicate: {listed:?}");
        assert!(unique.is_subset(&held), "every answered record is listed");
        assert_eq!(listed.len(), 24, "the 24 observations, nothing else");
        let offered = completed_evidence(addr, &handle);
        assert_eq!(offered, listed, "completion offers every record");
    }
    let sequences = cluster.psql(
        url.split('/').nth(3).unwrap().split('?').next().unwrap(),
        "SELECT string_agg(sequence::text, ',' ORDER BY sequence) FROM rea_evidence",
    );
    let expected: Vec<String> = (1..=24).map(|n| n.to_string()).collect();
    assert_eq!(
        sequences,
        expected.join(","),
        "one sequence per record, no gap"
    );

    // A residual unknown registered through one instance is listed through another.
    let registered = tool(
        addrs[1],
        "register_unknown",
        json!({"session": handle, "question": "Who calls main?"}),
    );
    let unknown = structured(&registered)["id"].as_str().unwrap().to_owned();
    let listed = tool(addrs[2], "list_unknowns", json!({"session": handle}));
    assert!(
        structured(&listed).to_string().contains(&unknown),
        "{unknown} through another instance: {listed}"
    );

    // The record through one instance is the record through another.
    let id = &answered[0];
    let got = |addr| {
        structured(&tool(
            addr,
            "get_evidence",
            json!({"session": handle, "id": id}),
        ))
        .clone()
    };
    assert_eq!(got(addrs[1]), got(addrs[2]));
}

#[test]
fn the_bytes_are_kept_once_by_hash_and_a_2025_session_sticks_to_its_instance() {
    let cluster = cluster();
    let database = cluster.database("bytes");
    let url = cluster.url(&database);
    let first = Instance::start(REA, &url, &[]);
    let second = Instance::start(REA, &url, &[]);
    let dir = tempfile::tempdir().unwrap();
    let binary = sample(dir.path());
    let one = open(first.addr, &binary);
    let two = open(second.addr, &binary);
    assert_ne!(one, two);
    assert_eq!(
        cluster.psql(&database, "SELECT count(*) FROM rea_binaries"),
        "1",
        "one copy of the bytes for two sessions of one file"
    );
    assert_eq!(
        cluster.psql(&database, "SELECT max(version) FROM rea_migrations"),
        rea::session::durable::POSTGRES_SCHEMA_VERSION.to_string()
    );
    // Closing one session through the other instance keeps the bytes the other still uses.
    structured(&tool(second.addr, "close_binary", json!({"session": one})));
    assert_eq!(
        cluster.psql(&database, "SELECT count(*) FROM rea_binaries"),
        "1"
    );
    let gone = tool(first.addr, "list_documents", json!({"session": one}));
    assert!(error_text(&gone).contains("no binary session"), "{gone}");
    structured(&tool(first.addr, "close_binary", json!({"session": two})));
    assert_eq!(
        cluster.psql(&database, "SELECT count(*) FROM rea_binaries"),
        "0",
        "the bytes go with the last session using them"
    );

    // A 2025 MCP session is the instance's own: another instance does not know its id.
    let initialized = call_2025(first.addr, None);
    let session_id = initialized.expect("a 2025 session id");
    assert!(call_2025(second.addr, Some(&session_id)).is_none());
}

/// A 2025 `initialize` (no `session`) or a `ping` in MCP session `session`: the session id
/// the answer names, or `None` when the instance refused the session.
fn call_2025(addr: SocketAddr, session: Option<&str>) -> Option<String> {
    use std::io::{Read, Write};
    let body = match session {
        None => json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "team-tests", "version": "0"}}}),
        Some(_) => json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    }
    .to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
    );
    if let Some(session) = session {
        head.push_str(&format!(
            "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        ));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    let status: u16 = reply.split(' ').nth(1).unwrap().parse().unwrap();
    if status != 200 {
        return None;
    }
    reply
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase()
                .starts_with("mcp-session-id:")
                .then(|| line.split_once(':').unwrap().1.trim().to_owned())
        })
        .or_else(|| session.map(str::to_owned))
}

#[test]
fn an_instance_killed_mid_work_loses_nothing_answered_and_the_others_serve_its_sessions() {
    let cluster = cluster();
    let url = cluster.url(&cluster.database("killed"));
    let mut doomed = Instance::start(REA, &url, &[]);
    let survivor = Instance::start(REA, &url, &[]);
    let dir = tempfile::tempdir().unwrap();
    let handle = open(doomed.addr, &sample(dir.path()));
    let addr = doomed.addr;
    let answered = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let mut answered = Vec::new();
            // Calls until the instance is gone; every answered ID is kept.
            while let Ok(answer) = try_call(
                addr,
                "tools/call",
                json!({"name": "list_documents",
                    "arguments": {"session": handle}}),
            ) {
                if let Some(id) = answer["result"]["structuredContent"]["evidence_id"].as_str() {
                    answered.push(id.to_owned());
                }
            }
            answered
        });
        // Let it answer some, then SIGKILL it in the middle of its work.
        while listed_evidence(survivor.addr, &handle).len() < 8 {
            std::thread::yield_now();
        }
        doomed.kill();
        worker.join().unwrap()
    });
    let listed = listed_evidence(survivor.addr, &handle);
    let held: BTreeSet<&String> = listed.iter().collect();
    for id in &answered {
        assert!(held.contains(id), "answered {id} is kept: {listed:?}");
    }
    assert!(
        listed.len() <= answered.len() + 1,
        "at most the one call in flight is kept unanswered"
    );
    // The survivor serves the session at once and goes on numbering after it.
    let next = observe(survivor.addr, &handle);
    assert!(next > *listed.last().unwrap());
    assert_eq!(
        listed_evidence(survivor.addr, &handle).len(),
        listed.len() + 1
    );
}

#[test]
fn a_stopped_database_is_an_error_naming_the_store_and_service_comes_back_with_it() {
    // A cluster of its own: stopping the shared one would fail the other tests.
    let mut cluster = Cluster::start();
    let database = cluster.database("stopped");
    let url = cluster.url(&database);
    let instance = Instance::start(REA, &url, &[]);
    let dir = tempfile::tempdir().unwrap();
    let handle = open(instance.addr, &sample(dir.path()));
    let before = observe(instance.addr, &handle);

    cluster.stop();
    let failed = tool(instance.addr, "list_documents", json!({"session": handle}));
    let text = error_text(&failed);
    let store = format!(
        "postgres://{}:5432/{database}",
        cluster.socket_dir().display()
    );
    assert!(text.contains(&store), "the error names the store: {text}");
    let mut settings = crate::support::snapshots::settings();
    settings.add_filter(
        &regex::escape(&store),
        "postgres://[SOCKET]:5432/[DATABASE]",
    );
    settings.add_filter(r"(failed while [^:]+): .*", "$1: [CAUSE]");
    settings.bind(|| {
        insta::assert_snapshot!("durable_postgres__database_stopped", text);
    });

    // Back up: the same instance serves again, with every answered record.
    cluster.run();
    let mut tries = 0;
    let after = loop {
        let result = tool(instance.addr, "list_documents", json!({"session": handle}));
        if result["isError"] == json!(false) {
            break result["structuredContent"]["evidence_id"]
                .as_str()
                .unwrap()
                .to_owned();
        }
        // A connection the pool held across the restart fails once, with the same error.
        tries += 1;
        assert!(
            tries < 3,
            "served again once the database is back: {result}"
        );
    };
    let listed = listed_evidence(instance.addr, &handle);
    assert!(
        listed.contains(&before) && listed.contains(&after),
        "{listed:?}"
    );
}

#[test]
fn a_session_no_call_changed_past_the_retention_is_swept_at_start_with_its_bytes() {
    let cluster = cluster();
    let database = cluster.database("retention");
    let url = cluster.url(&database);
    let first = Instance::start(REA, &url, &[]);
    let dir = tempfile::tempdir().unwrap();
    let binary = sample(dir.path());
    let (old, recent) = (open(first.addr, &binary), open(first.addr, &binary));
    observe(first.addr, &old);
    drop(first);
    cluster.psql(
        &database,
        &format!("UPDATE rea_sessions SET used = 0 WHERE handle = '{old}'"),
    );
    let second = Instance::start(REA, &url, &[]);
    let gone = tool(second.addr, "list_documents", json!({"session": old}));
    assert!(error_text(&gone).contains("no binary session"), "{gone}");
    assert_eq!(
        cluster.psql(&database, "SELECT count(*) FROM rea_evidence"),
        "0"
    );
    observe(second.addr, &recent);
    assert_eq!(
        cluster.psql(&database, "SELECT count(*) FROM rea_binaries"),
        "1",
        "the bytes the recent session uses stay"
    );
}

#[test]
fn a_role_with_only_row_rights_serves_a_migrated_database() {
    let cluster = cluster();
    let database = cluster.database("rights");
    let url = cluster.url(&database);
    drop(Instance::start(REA, &url, &[]));
    // What the README says rea needs once the database is migrated, and nothing more.
    cluster.psql(
        &database,
        "CREATE ROLE rea_rows LOGIN;
         REVOKE CREATE ON SCHEMA public FROM PUBLIC;
         GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO rea_rows;
         GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO rea_rows;",
    );
    let restricted = url.replacen("postgres@", "rea_rows@", 1);
    let instance = Instance::start(REA, &restricted, &[]);
    let dir = tempfile::tempdir().unwrap();
    let handle = open(instance.addr, &sample(dir.path()));
    let id = observe(instance.addr, &handle);
    assert_eq!(listed_evidence(instance.addr, &handle), [id]);
    structured(&tool(
        instance.addr,
        "close_binary",
        json!({"session": handle}),
    ));
}

#[test]
fn a_database_of_a_newer_schema_or_none_at_all_is_refused_naming_the_store() {
    let cluster = cluster();
    let database = cluster.database("newer");
    let url = cluster.url(&database);
    drop(Instance::start(REA, &url, &[]));
    cluster.psql(
        &database,
        "INSERT INTO rea_migrations (version, applied) VALUES (99, 0)",
    );
    let (started, stderr) = refused_start(REA, &url);
    assert!(!started, "{stderr}");
    let socket = cluster.socket_dir().display().to_string();
    snapshot(
        "durable_postgres__newer_schema",
        stderr
            .replace(&socket, "[SOCKET]")
            .replace(&database, "[DATABASE]"),
    );

    let missing = cluster.url("no_such_database");
    let (started, stderr) = refused_start(REA, &missing);
    assert!(!started, "{stderr}");
    assert!(
        stderr.contains("no_such_database") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

#[test]
fn the_team_servers_messages_name_the_store_and_what_to_do() {
    use rea::session::DurableError;
    let store = "postgres://db.example:5432/team".to_owned();
    let messages = [
        DurableError::Stale {
            store: store.clone(),
            handle: "bs_AAAAAAAAAAAAAAAAAAAAAA".to_owned(),
        },
        DurableError::Postgres {
            store: store.clone(),
            action: "committing a change",
            cause: "no connection to the database: error connecting to server".to_owned(),
        },
        DurableError::PostgresNewer {
            store,
            found: 7,
            supported: rea::session::durable::POSTGRES_SCHEMA_VERSION,
        },
    ];
    let text: Vec<String> = messages.iter().map(ToString::to_string).collect();
    snapshot("durable_postgres__messages", text.join("\n"));
}

#[test]
fn a_team_under_load_loses_no_answered_record_when_instances_and_the_database_are_killed() {
    use std::sync::RwLock;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    // A cluster of its own: the database is stopped under load.
    let mut cluster = Cluster::start();
    let url = cluster.url(&cluster.database("chaos"));
    let mut instances: Vec<Instance> = (0..3).map(|_| Instance::start(REA, &url, &[])).collect();
    let addrs = RwLock::new(instances.iter().map(|i| i.addr).collect::<Vec<_>>());
    let dir = tempfile::tempdir().unwrap();
    let binary = sample(dir.path());
    let handles: Vec<String> = (0..6)
        .map(|n| open(instances[n % 3].addr, &binary))
        .collect();
    let (stop, answered_calls, failed_calls) = (
        AtomicBool::new(false),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    let answered: Vec<(String, Vec<String>)> = std::thread::scope(|scope| {
        let clients: Vec<_> = handles
            .iter()
            .enumerate()
            .map(|(client, handle)| {
                let (addrs, stop) = (&addrs, &stop);
                let (answered_calls, failed_calls) = (&answered_calls, &failed_calls);
                scope.spawn(move || {
                    let mut ids = Vec::new();
                    let mut turn = client;
                    while !stop.load(Ordering::SeqCst) {
                        turn += 1;
                        let addr = {
                            let addrs = addrs.read().unwrap();
                            addrs[turn % addrs.len()]
                        };
                        let answer = try_call(
                            addr,
                            "tools/call",
                            json!({"name": "list_documents",
                            "arguments": {"session": handle}}),
                        );
                        match answer.ok().and_then(|answer| {
                            answer["result"]["structuredContent"]["evidence_id"]
                                .as_str()
                                .map(str::to_owned)
                        }) {
                            Some(id) => {
                                ids.push(id);
                                answered_calls.fetch_add(1, Ordering::SeqCst);
                            }
                            None => {
                                failed_calls.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                    }
                    (handle.clone(), ids)
                })
            })
            .collect();
        let wait_for = |calls: usize, counter: &AtomicUsize| {
            let target = counter.load(Ordering::SeqCst) + calls;
            while counter.load(Ordering::SeqCst) < target {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        };
        for (round, instance) in instances.iter_mut().take(2).enumerate() {
            wait_for(40, &answered_calls);
            // The database goes away under load, and comes back.
            cluster.stop();
            wait_for(6, &failed_calls);
            cluster.run();
            wait_for(40, &answered_calls);
            // An instance is SIGKILLed mid-work; a new one takes its place.
            instance.kill();
            wait_for(3, &failed_calls);
            *instance = Instance::start(REA, &url, &[]);
            addrs.write().unwrap()[round] = instance.addr;
        }
        wait_for(40, &answered_calls);
        stop.store(true, Ordering::SeqCst);
        clients.into_iter().map(|c| c.join().unwrap()).collect()
    });
    let failed = failed_calls.load(Ordering::SeqCst);
    for (handle, ids) in &answered {
        let listed = listed_evidence(instances[2].addr, handle);
        assert_eq!(listed, listed_evidence(instances[0].addr, handle));
        let held: BTreeSet<&String> = listed.iter().collect();
        assert_eq!(held.len(), listed.len(), "no duplicate: {listed:?}");
        assert!(listed.is_sorted(), "in order: {listed:?}");
        for id in ids {
            assert!(held.contains(id), "answered {id} of {handle} is kept");
        }
        let answered: BTreeSet<&String> = ids.iter().collect();
        assert_eq!(answered.len(), ids.len(), "no ID answered twice");
        assert!(
            listed.len() <= ids.len() + failed,
            "beyond the answered, only calls that failed: {} listed, {} answered",
            listed.len(),
            ids.len()
        );
    }
}
