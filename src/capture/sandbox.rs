//! Running one approved program inside a sandbox made of maintained parts, under stated bounds.
//!
//! The sandbox is `bubblewrap` (`bwrap --unshare-all --unshare-user --die-with-parent
//! --new-session --cap-drop ALL`): fresh user, PID, network (loopback only, unconnected to the
//! host), IPC, UTS and cgroup namespaces; `bwrap` sets `no_new_privs`, so a setuid binary gains
//! nothing; `--disable-userns` leaves the program no user namespace of its own to make, and
//! `--seccomp` installs the system-call filter of [`super::seccomp`] just before it starts. No
//! cgroup: where this was built there is cgroup v1 and no delegated subtree, so rlimits hold
//! memory and processes. The file system view is read-only: `/usr`, `/etc`, `/lib*`, `/bin`,
//! `/sbin`, the program's own directory, a private `/dev` and `/proc`, an empty `/tmp`, and one
//! empty writable directory (`/tmp/capture`, the working directory), a fresh host directory
//! removed afterwards. The host directory is private (mode 0700) and named after the server's
//! process: one that a server killed during a run leaves, the next server removes at start
//! ([`remove_stale_work_folders`]).
//! `strace` (a real ptrace tracer) runs `bwrap` and everything it starts
//! (`-f -q -i -ttt -k --seccomp-bpf`), writing its transcript into a FIFO outside the view.
//!
//! Bounds: rlimits set by `prlimit` (util-linux) inside the sandbox, so they count only the
//! sandbox's processes (address space = `max_memory_mib`, processes = `max_processes`, core
//! dumps off, files written at most 64 MiB); the wall time, the output
//! per stream and the processes started (counted from the transcript) are watched here, and
//! the first one passed ends the run: the tracer is killed, `bwrap --die-with-parent` then
//! kills the sandbox, whose PID namespace takes every process in it along.
//!
//! When `bwrap` or `strace` is missing, or the kernel refuses the namespaces (no unprivileged
//! user namespaces), [`run`] answers [`SandboxError::Unavailable`] and runs nothing.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::base::process_dirs;

/// The in-sandbox working directory: empty, writable, removed afterwards.
pub const WORK_DIR: &str = "/tmp/capture";

/// Bytes of each stream kept as its head in the capture.
pub const HEAD_BYTES: usize = 4_096;

/// Most bytes of tracer transcript read and parsed (the rest is read and dropped).
pub const MAX_TRANSCRIPT_BYTES: usize = 8 << 20;

/// Most bytes any file the program writes may hold (`RLIMIT_FSIZE`).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The limits of one run (checked against their maxima by the tool).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Wall time.
    pub wall_time: Duration,
    /// Bytes kept per output stream; more ends the run.
    pub output_bytes: u64,
    /// Address space of each process, in MiB.
    pub memory_mib: u64,
    /// Processes the program may start (itself included).
    pub processes: u64,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Run {
    /// The program's real path on the host (it is seen at the same path in the sandbox).
    pub program: PathBuf,
    /// Arguments after `argv[0]`.
    pub arguments: Vec<String>,
    /// Bytes written to its standard input (then closed).
    pub stdin: Vec<u8>,
    /// Its whole environment.
    pub environment: BTreeMap<String, String>,
    /// Its bounds.
    pub bounds: Bounds,
}

/// Which bound ended a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The wall time passed.
    WallTime,
    /// A stream passed its byte bound.
    Output,
    /// More processes were started than allowed.
    Processes,
    /// The request was cancelled.
    Cancelled,
}

impl Ended {
    /// The bound's name, as the tool's arguments name it.
    pub fn bound(self) -> &'static str {
        match self {
            Ended::WallTime => "timeout_secs",
            Ended::Output => "max_output_bytes",
            Ended::Processes => "max_processes",
            Ended::Cancelled => "cancelled",
        }
    }

    fn code(self) -> u8 {
        match self {
            Ended::WallTime => 1,
            Ended::Output => 2,
            Ended::Processes => 3,
            Ended::Cancelled => 4,
        }
    }

    fn from_code(code: u8) -> Option<Ended> {
        match code {
            1 => Some(Ended::WallTime),
            2 => Some(Ended::Output),
            3 => Some(Ended::Processes),
            4 => Some(Ended::Cancelled),
            _ => None,
        }
    }
}

/// One stream as captured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamCapture {
    /// SHA-256 of the bytes kept, lowercase hexadecimal.
    pub sha256: String,
    /// Bytes kept (at most the bound).
    pub bytes: u64,
    /// Whether more was written than kept.
    pub truncated: bool,
    /// The first [`HEAD_BYTES`] bytes.
    pub head: Vec<u8>,
}

pub use super::trace::Exit;

/// What one run produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// How the program ended.
    pub exit: Exit,
    /// Which bound ended it, if one did.
    pub ended: Option<Ended>,
    /// Standard output.
    pub stdout: StreamCapture,
    /// Standard error.
    pub stderr: StreamCapture,
    /// The tracer's transcript (at most [`MAX_TRANSCRIPT_BYTES`]).
    pub transcript: Vec<u8>,
    /// Wall time taken.
    pub elapsed: Duration,
}

impl Outcome {
    /// Settles how the program ended from what the transcript saw of its own process
    /// (`program_exit`) over the tracer's status, unless a bound ended the run (then it was
    /// killed). The tracer can die after the program: `strace -k` exits 1 when it cannot
    /// unwind bwrap's namespace init, which `--die-with-parent` kills once the outer bwrap
    /// has passed the program's status on and exited; the line it wrote for the program stands.
    pub fn settle_exit(&mut self, program_exit: Option<Exit>) {
        if self.ended.is_none()
            && let Some(exit) = program_exit
        {
            self.exit = exit;
        }
    }
}

/// Why nothing ran, or a run could not be finished.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The sandbox cannot be built here.
    #[error(
        "the capture sandbox cannot be built on this machine: {reason}; nothing was run \
         (install bubblewrap and strace, and allow unprivileged user namespaces)"
    )]
    Unavailable {
        /// What is missing or refused.
        reason: String,
    },
    /// The temporary directory could not be made or removed.
    #[error("the capture's temporary directory failed: {0}")]
    WorkDir(std::io::Error),
    /// The tracer could not be started or waited for.
    #[error("the tracer could not be run: {0}")]
    Tracer(std::io::Error),
}

/// The sandbox's tools, found on this machine.
#[derive(Clone, Debug)]
pub struct Tools {
    bwrap: PathBuf,
    strace: PathBuf,
    prlimit: PathBuf,
    /// The system-call filter ([`super::seccomp`]), compiled once.
    filter: Arc<[u8]>,
}

/// Finds `bwrap`, `strace` and `prlimit`, compiles the system-call filter, and checks that
/// the kernel gives the namespaces and takes the filter (runs `bwrap ... /bin/true`, nothing
/// of the caller's).
pub fn probe() -> Result<Tools, SandboxError> {
    let find = |name: &str| {
        ["/usr/bin", "/bin", "/usr/local/bin"]
            .iter()
            .map(|dir| Path::new(dir).join(name))
            .find(|path| path.is_file())
            .ok_or_else(|| SandboxError::Unavailable {
                reason: format!("`{name}` is not installed"),
            })
    };
    let filter = super::seccomp::filter_bytes().map_err(|error| SandboxError::Unavailable {
        reason: error.to_string(),
    })?;
    let tools = Tools {
        bwrap: find("bwrap")?,
        strace: find("strace")?,
        prlimit: find("prlimit")?,
        filter: filter.into(),
    };
    let started = |error: std::io::Error| SandboxError::Unavailable {
        reason: format!("bwrap could not be started ({error})"),
    };
    // The filter comes in on standard input, which `true` does not read.
    let mut probe = Command::new(&tools.bwrap)
        .args(NAMESPACES)
        .args(["--seccomp", "0", "--ro-bind", "/", "/", "--", "true"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(started)?;
    if let Some(mut stdin) = probe.stdin.take() {
        let _ = stdin.write_all(&tools.filter);
    }
    let output = probe.wait_with_output().map_err(started)?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        return Err(SandboxError::Unavailable {
            reason: format!(
                "bwrap refused the namespaces or the system-call filter ({})",
                said.trim().chars().take(200).collect::<String>()
            ),
        });
    }
    Ok(tools)
}

const NAMESPACES: &[&str] = &[
    "--unshare-all",
    "--unshare-user",
    // No user namespace inside: the program cannot build one of its own.
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
];

/// The start of the name of a run's host directory (`rea-capture-<pid>-<start>-<nonce>`, mode
/// 0700, in the temporary directory): the trace FIFO, the filter and the working directory.
const WORK_FOLDER_PREFIX: &str = "rea-capture-";

/// A host directory removed when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir() -> Result<TempDir, SandboxError> {
    let dir = TempDir(process_dirs::create(WORK_FOLDER_PREFIX).map_err(SandboxError::WorkDir)?);
    std::fs::create_dir(dir.0.join("work")).map_err(SandboxError::WorkDir)?;
    rustix::fs::mknodat(
        rustix::fs::CWD,
        dir.0.join("trace"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        0,
    )
    .map_err(|error| SandboxError::WorkDir(error.into()))?;
    Ok(dir)
}

/// Removes the host directories of runs that this user's servers left in the temporary
/// directory when they were killed during a run: those named after a server that no longer
/// runs. (Directories of earlier versions, named by a random number alone, cannot be told
/// apart from a running server's and stay.) Returns how many were removed.
pub fn remove_stale_work_folders() -> usize {
    process_dirs::remove_stale(
        |name| process_dirs::is_stale(name, WORK_FOLDER_PREFIX),
        "a capture's work folder",
    )
}

/// Runs `run` in the sandbox, stopping at its bounds or when `cancelled` says so.
pub fn run(
    tools: &Tools,
    run: &Run,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<Outcome, SandboxError> {
    let dir = temp_dir()?;
    let fifo = dir.0.join("trace");
    let filter = filter_fd(&dir, &tools.filter)?;
    let mut command = Command::new(&tools.strace);
    command
        .args(["-f", "-q", "-i", "-ttt", "-k", "--seccomp-bpf", "-s", "256"])
        .args([
            "-e",
            "trace=%process,%file,%network,%memory,kill,tkill,tgkill,ptrace",
        ])
        .arg("-o")
        .arg(&fifo)
        .arg("--")
        .arg(&tools.bwrap)
        .args(NAMESPACES)
        .arg("--seccomp")
        .arg(filter.as_raw_fd().to_string())
        .args(["--ro-bind", "/usr", "/usr"])
        .args(["--ro-bind-try", "/etc", "/etc"]);
    for dir in ["/lib", "/lib64", "/lib32", "/bin", "/sbin"] {
        command.args(["--ro-bind-try", dir, dir]);
    }
    command
        .args(["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"])
        .arg("--bind")
        .arg(dir.0.join("work"))
        .arg(WORK_DIR);
    if let Some(parent) = run.program.parent() {
        command.arg("--ro-bind").arg(parent).arg(parent);
    }
    command
        .args(["--chdir", WORK_DIR, "--"])
        .arg(&tools.prlimit)
        .arg(format!(
            "--as={}",
            run.bounds.memory_mib.saturating_mul(1 << 20)
        ))
        .arg(format!("--nproc={}", run.bounds.processes))
        .arg(format!("--fsize={MAX_FILE_BYTES}"))
        .arg("--core=0")
        .arg("--")
        .arg(&run.program)
        .args(&run.arguments)
        .env_clear()
        .envs(&run.environment)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    detach(&mut command, filter.as_raw_fd());
    let started = Instant::now();
    let ended = Arc::new(AtomicU8::new(0));
    let mut child = command.spawn().map_err(SandboxError::Tracer)?;
    drop(filter);
    let outcome = std::thread::scope(|scope| {
        let stdin = child.stdin.take();
        let input = &run.stdin;
        scope.spawn(move || {
            if let Some(mut stdin) = stdin {
                let _ = stdin.write_all(input);
            }
        });
        let bound = run.bounds.output_bytes;
        let readers = [
            child.stdout.take().map(boxed),
            child.stderr.take().map(boxed),
        ]
        .map(|stream| {
            let ended = Arc::clone(&ended);
            scope.spawn(move || read_stream(stream, bound, &ended))
        });
        let transcript = {
            let ended = Arc::clone(&ended);
            let fifo = fifo.clone();
            let program = run.program.to_string_lossy().into_owned();
            let processes = run.bounds.processes;
            scope.spawn(move || read_transcript(&fifo, &program, processes, &ended))
        };
        let status = watch(&mut child, run.bounds.wall_time, started, &ended, cancelled);
        // The tracer is gone; the transcript's reader, should it wait on the FIFO's open (or
        // not have reached it yet: a run cancelled before the tracer opened it), is let go.
        release(&fifo, &transcript);
        let [stdout, stderr] = readers.map(|reader| {
            reader
                .join()
                .unwrap_or_else(|_| read_stream(None, 0, &AtomicU8::new(0)))
        });
        let transcript = transcript.join().unwrap_or_default();
        status.map(|status| (status, stdout, stderr, transcript))
    });
    let (status, stdout, stderr, transcript) = outcome.map_err(SandboxError::Tracer)?;
    let ended = Ended::from_code(ended.load(Ordering::SeqCst));
    let exit = match (status.code(), status.signal()) {
        (Some(code), _) => program_exit(code),
        (None, Some(signal)) => Exit::Signal(signal_name(signal)),
        (None, None) => Exit::Signal("SIGKILL".to_owned()),
    };
    let exit = if ended.is_some() {
        Exit::Signal("SIGKILL".to_owned())
    } else {
        exit
    };
    Ok(Outcome {
        exit,
        ended,
        stdout,
        stderr,
        transcript,
        elapsed: started.elapsed(),
    })
}

/// strace exits with the traced command's code, or 128 + the signal that killed it (and
/// kills itself with that signal when it can).
fn program_exit(code: i32) -> Exit {
    // bwrap passes the program's status on; a status over 128 from strace is a signal.
    if code > 128 && code < 128 + 65 {
        Exit::Signal(signal_name(code - 128))
    } else {
        Exit::Code(i64::from(code))
    }
}

/// The name of signal `number` (`SIG` + upper-case letters or digits).
pub fn signal_name(number: i32) -> String {
    let name = match number {
        1 => "HUP",
        2 => "INT",
        3 => "QUIT",
        4 => "ILL",
        5 => "TRAP",
        6 => "ABRT",
        7 => "BUS",
        8 => "FPE",
        9 => "KILL",
        10 => "USR1",
        11 => "SEGV",
        12 => "USR2",
        13 => "PIPE",
        14 => "ALRM",
        15 => "TERM",
        16 => "STKFLT",
        17 => "CHLD",
        18 => "CONT",
        19 => "STOP",
        20 => "TSTP",
        21 => "TTIN",
        22 => "TTOU",
        23 => "URG",
        24 => "XCPU",
        25 => "XFSZ",
        26 => "VTALRM",
        27 => "PROF",
        28 => "WINCH",
        29 => "IO",
        30 => "PWR",
        31 => "SYS",
        other => return format!("SIG{}", other.clamp(0, 99)),
    };
    format!("SIG{name}")
}

fn boxed(stream: impl Read + Send + 'static) -> Box<dyn Read + Send> {
    Box::new(stream)
}

/// Reads a stream to its end, keeping `bound` bytes; more sets `ended` to the output bound.
fn read_stream(
    stream: Option<Box<dyn Read + Send>>,
    bound: u64,
    ended: &AtomicU8,
) -> StreamCapture {
    let mut hasher = Sha256::new();
    let mut kept = 0u64;
    let mut head = Vec::new();
    let mut truncated = false;
    let mut buffer = vec![0u8; 16 * 1024];
    if let Some(mut stream) = stream {
        loop {
            let read = match stream.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(read) => read,
            };
            let room = usize::try_from(bound.saturating_sub(kept)).unwrap_or(usize::MAX);
            let keep = read.min(room);
            hasher.update(&buffer[..keep]);
            let head_room = HEAD_BYTES.saturating_sub(head.len());
            head.extend_from_slice(&buffer[..keep.min(head_room)]);
            kept += keep as u64;
            if keep < read && !truncated {
                truncated = true;
                let _ = ended.compare_exchange(
                    0,
                    Ended::Output.code(),
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                );
            }
        }
    }
    StreamCapture {
        sha256: hasher
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect(),
        bytes: kept,
        truncated,
        head,
    }
}

/// Reads the tracer's FIFO to its end, keeping [`MAX_TRANSCRIPT_BYTES`], and counts the
/// processes the program starts: more than `processes` sets `ended`.
fn read_transcript(fifo: &Path, program: &str, processes: u64, ended: &AtomicU8) -> Vec<u8> {
    let Ok(mut file) = std::fs::File::open(fifo) else {
        return Vec::new();
    };
    let mut transcript = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    let mut seen_program = false;
    let mut started = 0u64;
    let mut scanned = 0usize;
    loop {
        let read = match file.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        let room = MAX_TRANSCRIPT_BYTES.saturating_sub(transcript.len());
        transcript.extend_from_slice(&buffer[..read.min(room)]);
        // Count starts in the complete lines kept so far.
        let Some(end) = transcript.iter().rposition(|&byte| byte == b'\n') else {
            continue;
        };
        for line in transcript[scanned..=end].split(|&byte| byte == b'\n') {
            let line = String::from_utf8_lossy(line);
            if !seen_program {
                seen_program = super::trace::is_program_start(&line, program);
            } else if super::trace::is_process_start(&line) {
                started += 1;
            }
        }
        scanned = end + 1;
        if started + 1 > processes {
            let _ = ended.compare_exchange(
                0,
                Ended::Processes.code(),
                Ordering::SeqCst,
                Ordering::SeqCst,
            );
        }
    }
    transcript
}

/// Waits for the tracer, killing it when a bound is passed or the call is cancelled.
fn watch(
    child: &mut Child,
    wall_time: Duration,
    started: Instant,
    ended: &AtomicU8,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> std::io::Result<std::process::ExitStatus> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if started.elapsed() >= wall_time {
            let _ = ended.compare_exchange(
                0,
                Ended::WallTime.code(),
                Ordering::SeqCst,
                Ordering::SeqCst,
            );
        }
        if cancelled() {
            let _ = ended.compare_exchange(
                0,
                Ended::Cancelled.code(),
                Ordering::SeqCst,
                Ordering::SeqCst,
            );
        }
        if ended.load(Ordering::SeqCst) != 0 {
            // Killing the tracer kills bwrap (--die-with-parent), which kills the sandbox. The
            // whole process group goes (the tracer leads it, see `detach`): a run ended between
            // the tracer's fork and its child's exec left that child, which holds the output
            // pipes, stopped for ever once its tracer was gone.
            let _ = rustix::process::kill_process_group(
                rustix::process::Pid::from_child(child),
                rustix::process::Signal::KILL,
            );
            let _ = child.kill();
            return child.wait();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Opens the FIFO for writing without blocking and closes it, so a reader still waiting in
/// `open` (the tracer never opened it) sees the end.
fn release<T>(fifo: &Path, reader: &std::thread::ScopedJoinHandle<'_, T>) {
    // A non-blocking open for writing fails (ENXIO) until a reader has the FIFO open, and the
    // reader's thread may not have reached its open yet: try until the reader is done, at
    // most `RELEASE_TRIES` times. Each successful open is closed at once, so the reader
    // sees the end of the stream.
    for _ in 0..RELEASE_TRIES {
        if reader.is_finished() {
            return;
        }
        let _ = rustix::fs::open(
            fifo,
            rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// How often [`release`] tries to let the transcript's reader go (5 ms apart: 10 s).
const RELEASE_TRIES: usize = 2_000;

/// The lowest descriptor the filter is given: above the standard streams, which the child's
/// set-up replaces, whatever this process has open.
const FILTER_FD_FLOOR: i32 = 10;

/// The system-call filter in a file of the run's directory, open on a descriptor of at least
/// [`FILTER_FD_FLOOR`], closed on exec here (the tracer alone inherits it: [`detach`]).
fn filter_fd(dir: &TempDir, filter: &[u8]) -> Result<OwnedFd, SandboxError> {
    let path = dir.0.join("seccomp");
    std::fs::write(&path, filter).map_err(SandboxError::WorkDir)?;
    let file = std::fs::File::open(&path).map_err(SandboxError::WorkDir)?;
    rustix::io::fcntl_dupfd_cloexec(&file, FILTER_FD_FLOOR)
        .map_err(|error| SandboxError::WorkDir(error.into()))
}

/// Puts the tracer in its own session, asks the kernel to kill it when this process dies,
/// and lets it inherit the filter's descriptor `filter` (for bwrap's `--seccomp`), between
/// `fork` and `exec`.
#[allow(unsafe_code)]
fn detach(command: &mut Command, filter: RawFd) {
    // SAFETY: the closure runs in the child between fork and exec and only makes three system
    // calls through rustix (setsid, prctl, fcntl), which allocate nothing and take no lock, so
    // it is async-signal-safe. `filter` is open in the child: the parent keeps it open until
    // `spawn` returns, and the child's set-up only replaces descriptors 0 to 2.
    unsafe {
        command.pre_exec(move || {
            rustix::process::setsid()?;
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            let filter = BorrowedFd::borrow_raw(filter);
            rustix::io::fcntl_setfd(filter, rustix::io::FdFlags::empty())?;
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(exit: Exit, ended: Option<Ended>) -> Outcome {
        let stream = StreamCapture {
            bytes: 0,
            sha256: String::new(),
            truncated: false,
            head: Vec::new(),
        };
        Outcome {
            exit,
            ended,
            stdout: stream.clone(),
            stderr: stream,
            transcript: Vec::new(),
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn the_transcript_settles_the_exit_unless_a_bound_ended_the_run() {
        // The tracer died after the program (exit 1); the transcript saw the program's 3.
        let mut died = outcome(Exit::Code(1), None);
        died.settle_exit(Some(Exit::Code(3)));
        assert_eq!(died.exit, Exit::Code(3));
        let mut unseen = outcome(Exit::Code(1), None);
        unseen.settle_exit(None);
        assert_eq!(unseen.exit, Exit::Code(1));
        let killed = Exit::Signal("SIGKILL".to_owned());
        let mut bounded = outcome(killed.clone(), Some(Ended::WallTime));
        bounded.settle_exit(Some(Exit::Signal("SIGSEGV".to_owned())));
        assert_eq!(bounded.exit, killed);
    }
}
