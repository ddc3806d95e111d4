//! The adapters of the real `rea serve --provider angr` over stdio, with the deliberately
//! broken adapter (`tests/adapters/fake_adapter.py`) standing in for angr (`--angr-dir`,
//! `--angr-venv`): the folder and environment it runs in, the slot of one that died, idle
//! ones stopped, slots shared between binary sessions, the private copies (written when an
//! adapter starts, removed when it stops, those of killed servers removed at start), and the
//! memory limit named when an adapter runs out of it.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use super::angr::SERVE_WITH_ANGR;
use crate::support::server_process::ServerProcess;

/// The real Python interpreter (not a shim in front of it).
fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let output = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 runs");
        PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
    })
}

/// A folder posing as the angr adapter's (`angr/rea_angr_adapter.py` is the fake adapter,
/// `venv/bin/python` the interpreter), and a temporary directory anyone may write, as `/tmp`
/// (`tmp`, mode 1777), that the servers are given as `TMPDIR`.
pub struct FakeAngr {
    dir: TempDir,
}

impl FakeAngr {
    pub fn new() -> FakeAngr {
        let dir = tempfile::tempdir().unwrap();
        let angr = dir.path().join("angr");
        std::fs::create_dir(&angr).unwrap();
        std::fs::copy(
            crate::support::tools::fake_script(),
            angr.join("rea_angr_adapter.py"),
        )
        .unwrap();
        let bin = dir.path().join("venv/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(python(), bin.join("python")).unwrap();
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).unwrap();
        FakeAngr { dir }
    }

    /// The shared temporary directory.
    pub fn tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }

    /// `rea serve --provider angr` with the fake adapter and `args`, `TMPDIR` the shared
    /// temporary directory.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_rea-under-test"));
        command
            .args(SERVE_WITH_ANGR)
            .arg(self.dir.path().join("angr"))
            .arg("--angr-venv")
            .arg(self.dir.path().join("venv"))
            .args(args)
            .env("TMPDIR", self.tmp())
            .stderr(Stdio::null());
        command
    }

    pub fn serve(&self, args: &[&str]) -> ServerProcess {
        ServerProcess::with_command(self.command(args))
    }

    /// The folders in the shared temporary directory.
    pub fn folders(&self) -> Vec<PathBuf> {
        let mut folders: Vec<PathBuf> = std::fs::read_dir(self.tmp())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        folders.sort();
        folders
    }

    /// The private copies of binaries in the servers' folders.
    pub fn copies(&self) -> Vec<PathBuf> {
        self.folders()
            .iter()
            .filter_map(|folder| std::fs::read_dir(folder).ok())
            .flat_map(|entries| entries.map(|e| e.unwrap().path()))
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("copy-")
            })
            .collect()
    }
}

/// A small binary to open.
pub fn small_binary() -> PathBuf {
    ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(crate::support::tools::this_executable)
}

/// Opens `path` in a new binary session and returns its handle.
pub fn open(server: &mut ServerProcess, path: &Path) -> String {
    let opened = server.tool("open_binary", json!({"path": path}));
    assert_eq!(opened["isError"], json!(false), "{opened}");
    let providers = &opened["structuredContent"]["providers"];
    assert_eq!(providers, &json!(["native", "angr"]), "{opened}");
    opened["structuredContent"]["session"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The text of a tool result.
fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// The fake adapter's process id in `session`, from the name it gives 0x1000.
fn adapter_pid(server: &mut ServerProcess, session: &str) -> u32 {
    let result = server.tool(
        "procedure_info",
        json!({"provider": "angr", "procedure": "0x1000", "session": session}),
    );
    assert_eq!(result["isError"], json!(false), "{result}");
    result["structuredContent"]["name"]["name"]
        .as_str()
        .and_then(|name| name.strip_prefix("pid-"))
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("a pid-N name: {result}"))
}

/// Whether process `pid` runs (and is not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, after) = stat.rsplit_once(')')?;
            after.split_whitespace().next().map(|state| state != "Z")
        })
        .unwrap_or(false)
}

/// Waits up to `limit` for `done`.
fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// The key of the record a decompilation of 0xe1 answers: the fake adapter's working
/// directory and environment.
fn adapter_environment(server: &mut ServerProcess, session: &str) -> Value {
    let result = server.tool(
        "decompile",
        json!({"provider": "angr", "procedure": "0xe1", "session": session}),
    );
    assert_eq!(result["isError"], json!(false), "{result}");
    serde_json::from_str(result["structuredContent"]["code"].as_str().unwrap()).unwrap()
}

#[test]
fn an_adapter_runs_in_a_private_folder_with_only_the_environment_it_is_given() {
    let fake = FakeAngr::new();
    let shared = fake.tmp();
    let mut command = fake.command(&[]);
    // A hostile environment: everything points where anyone may write.
    command
        .env("HOME", &shared)
        .env("XDG_CACHE_HOME", &shared)
        .env("XDG_CONFIG_HOME", &shared)
        .env("PYTHONPATH", &shared)
        .env("PYTHONSTARTUP", shared.join("startup.py"))
        .env("PYTHONPYCACHEPREFIX", &shared);
    let mut server = ServerProcess::with_command(command);
    let binary = small_binary();
    let sessions: Vec<String> = (0..4).map(|_| open(&mut server, &binary)).collect();
    assert_eq!(
        fake.folders(),
        Vec::<PathBuf>::new(),
        "opening writes no copy while no adapter runs"
    );

    let seen = adapter_environment(&mut server, &sessions[0]);
    let folders = fake.folders();
    assert_eq!(folders.len(), 1, "one private folder: {folders:?}");
    let root = &folders[0];
    let name = root.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!("rea-adapters-{}-", server.id())),
        "{name}"
    );
    let meta = std::fs::symlink_metadata(root).unwrap();
    assert!(meta.is_dir());
    assert_eq!(meta.mode() & 0o777, 0o700, "{name} is private");
    assert_eq!(meta.uid(), rustix::process::geteuid().as_raw());
    assert_eq!(
        fake.copies().len(),
        1,
        "one copy, for the one adapter running"
    );

    let env = seen["env"].as_object().unwrap();
    // The folders the adapter is given, and the other variables it may see.
    let folders = [
        "HOME",
        "TMPDIR",
        "TEMP",
        "TMP",
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_RUNTIME_DIR",
    ];
    let others = [
        "PATH",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "PYTHONNOUSERSITE",
        "PYTHONDONTWRITEBYTECODE",
    ];
    for key in env.keys() {
        assert!(
            folders.contains(&key.as_str()) || others.contains(&key.as_str()),
            "{key} passed to the adapter"
        );
    }
    for key in folders {
        let value = Path::new(env[key].as_str().unwrap());
        assert!(value.starts_with(root), "{key}={}", value.display());
        let meta = std::fs::symlink_metadata(value).unwrap();
        assert!(
            meta.is_dir() && meta.mode() & 0o077 == 0,
            "{key} is private"
        );
    }
    assert_eq!(seen["cwd"], env["HOME"], "the adapter runs in its home");

    // Every session's adapter shares the server's folder; each has its own copy.
    adapter_environment(&mut server, &sessions[1]);
    assert_eq!(fake.folders().len(), 1);
    assert_eq!(fake.copies().len(), 2);

    assert!(server.finish().success());
    assert_eq!(
        fake.folders(),
        Vec::<PathBuf>::new(),
        "the folder goes with the server"
    );
}

#[test]
fn a_killed_adapter_frees_its_slot_and_its_copy_at_once() {
    let fake = FakeAngr::new();
    let mut server = fake.serve(&["--max-adapters", "1", "--adapter-idle-secs", "3600"]);
    let binary = small_binary();
    let first = open(&mut server, &binary);
    let second = open(&mut server, &binary);
    let pid = adapter_pid(&mut server, &first);
    assert_eq!(fake.copies().len(), 1);
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    // Nobody asked anything: the server noticed the adapter's end by itself.
    assert!(
        eventually(Duration::from_secs(5), || fake.copies().is_empty()),
        "the dead adapter's copy was removed: {:?}",
        fake.copies()
    );
    let other = adapter_pid(&mut server, &second);
    assert_ne!(other, pid);
    // And the first session gets a new adapter in turn.
    assert_ne!(adapter_pid(&mut server, &first), pid);
}

#[test]
fn an_idle_adapter_is_stopped_after_the_idle_time() {
    let fake = FakeAngr::new();
    let mut server = fake.serve(&["--adapter-idle-secs", "1"]);
    let session = open(&mut server, &small_binary());
    let started = Instant::now();
    let pid = adapter_pid(&mut server, &session);
    assert!(
        eventually(Duration::from_secs(10), || !alive(pid)),
        "the idle adapter was stopped"
    );
    let stopped_after = started.elapsed();
    assert!(
        stopped_after >= Duration::from_millis(900),
        "{stopped_after:?}"
    );
    println!("idle adapter stopped after {stopped_after:?} (--adapter-idle-secs 1)");
    // The copy is removed once the server has seen its process end, a moment after.
    assert!(
        eventually(Duration::from_secs(5), || fake.copies().is_empty()),
        "its copy went with it: {:?}",
        fake.copies()
    );
    // The next call starts a new one.
    let again = adapter_pid(&mut server, &session);
    assert_ne!(again, pid);
    assert!(alive(again));
}

#[test]
fn when_every_slot_is_taken_an_idle_adapter_of_another_session_makes_room() {
    let fake = FakeAngr::new();
    let mut server = fake.serve(&["--max-adapters", "1", "--adapter-idle-secs", "3600"]);
    let binary = small_binary();
    let first = open(&mut server, &binary);
    let second = open(&mut server, &binary);
    let first_pid = adapter_pid(&mut server, &first);
    let second_pid = adapter_pid(&mut server, &second);
    assert!(!alive(first_pid), "the idle adapter made room");
    assert!(alive(second_pid));

    // A busy adapter is not stopped: the other session waits for its call to end.
    let slow = server.send_tool(
        "procedure_info",
        json!({"provider": "angr", "procedure": "0x5105", "session": second}),
    );
    std::thread::sleep(Duration::from_millis(300));
    let waiting = server.send_tool(
        "procedure_info",
        json!({"provider": "angr", "procedure": "0x1000", "session": first}),
    );
    let mut answers = std::collections::HashMap::new();
    for _ in 0..2 {
        let answer = server.next_response();
        answers.insert(answer["id"].as_u64().unwrap(), answer);
    }
    let slow = &answers[&slow]["result"];
    assert_eq!(
        slow["isError"],
        json!(false),
        "the busy call finished: {slow}"
    );
    let waited = &answers[&waiting]["result"];
    assert_eq!(
        waited["isError"],
        json!(false),
        "the waiting call got the slot: {waited}"
    );
    assert!(!alive(second_pid));
}

#[test]
fn the_folders_of_killed_servers_are_removed_at_start() {
    let fake = FakeAngr::new();
    let mut killed = fake.serve(&[]);
    let session = open(&mut killed, &small_binary());
    adapter_pid(&mut killed, &session);
    let left = fake.folders();
    assert_eq!(left.len(), 1);
    drop(killed); // SIGKILL: nothing is cleaned up
    assert_eq!(fake.folders(), left, "a killed server leaves its folder");

    // A private copy in the form of earlier versions, of a server that is gone.
    let old = fake
        .tmp()
        .join(format!("rea-adapter-{}-0-17", u32::MAX >> 1));
    std::fs::create_dir(&old).unwrap();
    std::fs::write(old.join("binary"), b"\x7fELF").unwrap();
    // The folder of a server that runs (this test process), and one of another user.
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let start: u64 = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .nth(19)
        .unwrap()
        .parse()
        .unwrap();
    let running = fake
        .tmp()
        .join(format!("rea-adapters-{}-{start}-0", std::process::id()));
    std::fs::create_dir(&running).unwrap();
    let foreign = fake
        .tmp()
        .join(format!("rea-adapters-{}-1-0", u32::MAX >> 1));
    std::fs::create_dir(&foreign).unwrap();
    let root = rustix::process::geteuid().is_root();
    if root {
        std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).unwrap();
    }

    let server = fake.serve(&[]);
    let mut expected = vec![running.clone()];
    if root {
        expected.push(foreign.clone());
    }
    expected.sort();
    assert_eq!(
        fake.folders(),
        expected,
        "only the stale folders of this user went"
    );
    drop(server);
}

#[test]
fn an_adapter_that_runs_out_of_its_memory_limit_is_said_to() {
    let fake = FakeAngr::new();
    let mut server = fake.serve(&["--adapter-memory-mib", "256"]);
    let session = open(&mut server, &small_binary());
    // 0xa11c allocates 1 GiB: Python's MemoryError under the 256 MiB limit.
    let result = server.tool(
        "procedure_info",
        json!({"provider": "angr", "procedure": "0xa11c", "session": session}),
    );
    assert_eq!(result["isError"], json!(true), "{result}");
    let message = text(&result);
    assert!(
        message.contains("ran out of its memory limit of 256 MiB (--adapter-memory-mib)"),
        "{message}"
    );
    crate::support::tools::snapshot("external__out_of_memory", &message, None);
    adapter_pid(&mut server, &session);
}
