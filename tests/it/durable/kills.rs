//! SIGKILL at random instants (docs/CONTRACT.md section 16): the real server on a temporary
//! store, a stream of observing calls, unknowns and closes, and a kill at a random instant,
//! over and over. After every restart every answered call is there, no partial one is
//! visible, and the store opens.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::fixtures::{Format, Spec, build};
use serde_json::{Value, json};

/// Kills the test makes at least, unless `REA_KILLS` asks for more (the soak run of the
/// README: `REA_KILLS=1000`).
fn kills_wanted() -> usize {
    std::env::var("REA_KILLS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(200)
        .max(200)
}

/// A small generator of random numbers (xorshift64*), seeded from the clock; the seed is
/// printed so a failure can be replayed.
struct Random(u64);

impl Random {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % bound.max(1)
    }
}

/// What the answers said is kept.
#[derive(Default)]
struct Answered {
    /// Evidence IDs answered, in the session now open.
    evidence: BTreeSet<String>,
    /// Unknown revisions answered: ID, question and the status last answered.
    unknowns: BTreeMap<String, (String, String)>,
    /// A close_binary was sent and not answered: the session may be gone, wholly.
    close_in_flight: bool,
}

/// One server: its process (shared with the thread that kills it) and its stdio.
struct Run {
    child: Arc<Mutex<Child>>,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl Run {
    fn start(store: &Path, binary: &Path) -> Run {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rea-under-test"))
            .args(["serve", "--store"])
            .arg(store)
            .arg("--open")
            .arg(binary)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("rea serve starts");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Run {
            child: Arc::new(Mutex::new(child)),
            input,
            output,
            next_id: 1,
        }
    }

    fn kill_after(&self, wait: Duration) -> std::thread::JoinHandle<()> {
        let child = Arc::clone(&self.child);
        std::thread::spawn(move || {
            std::thread::sleep(wait);
            let _ = child.lock().unwrap().kill();
        })
    }

    /// The answer to one request, or `None` when the server died before writing it whole.
    fn request(&mut self, method: &str, params: Value) -> Option<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.input, "{line}").ok()?;
        self.input.flush().ok()?;
        loop {
            let mut line = String::new();
            self.output.read_line(&mut line).ok()?;
            if !line.ends_with('\n') {
                return None;
            }
            let message: Value = serde_json::from_str(&line).expect("a JSON line");
            if message["id"] == json!(id) {
                return Some(message);
            }
        }
    }

    fn tool(&mut self, name: &str, arguments: Value) -> Option<Value> {
        let answer = self.request("tools/call", json!({"name": name, "arguments": arguments}))?;
        Some(answer["result"].clone())
    }

    /// A request that must be answered: the server is not being killed now.
    fn must(&mut self, name: &str, arguments: Value) -> Value {
        match self.tool(name, arguments) {
            Some(result) => result,
            None => panic!("the server died unasked: {}", self.stderr()),
        }
    }

    fn stderr(&mut self) -> String {
        let mut child = self.child.lock().unwrap();
        let _ = child.kill();
        let _ = child.wait();
        let mut text = String::new();
        if let Some(mut stderr) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        }
        text
    }

    fn initialize(&mut self) -> Option<Value> {
        self.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "kills", "version": "0"}}),
        )
    }

    fn wait(self) {
        let _ = self.child.lock().unwrap().wait();
    }
}

/// Every page of a listing tool.
fn all_pages(run: &mut Run, tool: &str, extra: Value, field: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut arguments = extra.clone();
        arguments["limit"] = json!(100);
        if let Some(cursor) = &cursor {
            arguments["cursor"] = json!(cursor);
        }
        let page = run.must(tool, arguments);
        assert_eq!(page["isError"], json!(false), "{page}");
        let page = &page["structuredContent"];
        items.extend(page[field].as_array().unwrap().iter().cloned());
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return items,
        }
    }
}

/// Checks the resumed session against what was answered.
fn verify(run: &mut Run, answered: &mut Answered) {
    let records = all_pages(run, "list_evidence", json!({}), "evidence");
    let ids: BTreeSet<String> = records
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    let missing: Vec<&String> = answered.evidence.difference(&ids).collect();
    if answered.close_in_flight && !missing.is_empty() {
        // The close was committed: the session went whole, and --open opened a new one.
        assert!(records.is_empty(), "a half-closed session: {records:?}");
        *answered = Answered::default();
        return verify(run, answered);
    }
    assert!(missing.is_empty(), "answered Evidence lost: {missing:?}");
    let sequences: Vec<u64> = records
        .iter()
        .map(|r| r["sequence"].as_u64().unwrap())
        .collect();
    let expected: Vec<u64> = (1..=records.len() as u64).collect();
    assert_eq!(
        sequences, expected,
        "the ledger has a gap or a partial record"
    );
    let revisions = all_pages(
        run,
        "list_unknowns",
        json!({"revisions": "all"}),
        "unknowns",
    );
    let by_id: BTreeMap<&str, &Value> = revisions
        .iter()
        .map(|u| (u["id"].as_str().unwrap(), u))
        .collect();
    if answered.close_in_flight
        && answered
            .unknowns
            .keys()
            .any(|id| !by_id.contains_key(id.as_str()))
    {
        assert!(
            revisions.is_empty() && records.is_empty(),
            "a half-closed session"
        );
        *answered = Answered::default();
        return;
    }
    answered.close_in_flight = false;
    for (id, (question, status)) in &answered.unknowns {
        let kept = by_id
            .get(id.as_str())
            .unwrap_or_else(|| panic!("answered unknown {id} lost"));
        assert_eq!(kept["question"], json!(question), "{kept}");
        if status != "open" {
            assert_eq!(kept["status"], json!(status), "{kept}");
        }
    }
    for revision in &revisions {
        let id = revision["id"].as_str().unwrap();
        match revision["status"].as_str().unwrap() {
            "superseded" => {
                let next = revision["superseded_by"].as_str().expect("a successor");
                let successor = by_id.get(next).expect("the successor is kept");
                assert_eq!(successor["revises"], json!(id), "a partial refinement");
            }
            _ => assert!(revision["superseded_by"].is_null(), "{revision}"),
        }
        if let Some(previous) = revision["revises"].as_str() {
            let previous = by_id.get(previous).expect("the revised one is kept");
            assert_eq!(previous["superseded_by"], json!(id), "a partial refinement");
        }
    }
}

/// Sends random calls until the server dies, noting what was answered.
/// The stream's context: the binary and the address of its code.
struct Target<'a> {
    binary: &'a Path,
    text: u64,
}

fn stream(
    run: &mut Run,
    answered: &mut Answered,
    random: &mut Random,
    target: &Target<'_>,
    count: &mut u64,
) {
    loop {
        *count += 1;
        let open_heads: Vec<String> = answered
            .unknowns
            .iter()
            .filter(|(_, (_, status))| status == "open")
            .map(|(id, _)| id.clone())
            .collect();
        let choice = random.below(100);
        let answer = if choice < 55 {
            let address = format!("{:#x}", target.text + random.below(32));
            let length = 1 + random.below(16);
            run.tool("read_bytes", json!({"address": address, "length": length}))
        } else if choice < 75 {
            let question = format!("question {count}");
            let answer = run.tool("register_unknown", json!({"question": question}));
            if let Some(result) = &answer
                && let Some(id) = result["structuredContent"]["id"].as_str()
            {
                answered
                    .unknowns
                    .insert(id.to_owned(), (question, "open".to_owned()));
            }
            answer.map(|_| Value::Null)
        } else if choice < 88 && !open_heads.is_empty() {
            let head = &open_heads[random.below(open_heads.len() as u64) as usize];
            let question = format!("refined {count}");
            let answer = run.tool("refine_unknown", json!({"id": head, "question": question}));
            if let Some(result) = &answer
                && let Some(id) = result["structuredContent"]["id"].as_str()
            {
                answered
                    .unknowns
                    .insert(id.to_owned(), (question, "open".to_owned()));
                if let Some(old) = answered.unknowns.get_mut(head) {
                    old.1 = "superseded".to_owned();
                }
            }
            answer.map(|_| Value::Null)
        } else if choice < 97 && !open_heads.is_empty() && !answered.evidence.is_empty() {
            let head = &open_heads[random.below(open_heads.len() as u64) as usize];
            let cited = answered.evidence.iter().next().unwrap().clone();
            let answer = run.tool("resolve_unknown", json!({"id": head, "evidence": [cited]}));
            if let Some(result) = &answer
                && result["isError"] == json!(false)
                && let Some(old) = answered.unknowns.get_mut(head)
            {
                old.1 = "resolved".to_owned();
            }
            answer.map(|_| Value::Null)
        } else {
            answered.close_in_flight = true;
            let closed = run.tool("close_binary", json!({}));
            if closed.is_some() {
                *answered = Answered::default();
            }
            closed.and_then(|_| run.tool("open_binary", json!({"path": target.binary})))
        };
        let Some(result) = answer else {
            return;
        };
        if let Some(id) = result["structuredContent"]["evidence_id"].as_str() {
            answered.evidence.insert(id.to_owned());
        }
    }
}

#[test]
fn sigkill_at_random_instants_loses_no_answered_call_and_shows_no_partial_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let built = build(&Spec::sample(), Format::Elf);
    let binary = dir.path().join("sample");
    std::fs::write(&binary, &built.bytes).unwrap();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("seed {seed}");
    let mut random = Random(seed);
    let mut answered = Answered::default();
    let started = Instant::now();
    let (mut kills, mut calls, mut startup_kills) = (0, 0, 0);
    let wanted = kills_wanted();
    while kills < wanted {
        let mut run = Run::start(&store, &binary);
        if random.below(6) == 0 {
            // Killed while it opens the store and resumes.
            run.kill_after(Duration::from_micros(random.below(20_000)))
                .join()
                .unwrap();
            run.wait();
            kills += 1;
            startup_kills += 1;
            continue;
        }
        if run.initialize().is_none() {
            panic!(
                "the store did not open after {kills} kills: {}",
                run.stderr()
            );
        }
        verify(&mut run, &mut answered);
        let killer = run.kill_after(Duration::from_micros(random.below(30_000)));
        let target = Target {
            binary: &binary,
            text: built.text_address,
        };
        stream(&mut run, &mut answered, &mut random, &target, &mut calls);
        killer.join().unwrap();
        run.wait();
        kills += 1;
    }
    let mut last = Run::start(&store, &binary);
    assert!(last.initialize().is_some(), "{}", last.stderr());
    verify(&mut last, &mut answered);
    eprintln!(
        "{kills} kills ({startup_kills} during start-up), {calls} calls, {:?}",
        started.elapsed()
    );
}
