//! One adapter process: started with a memory limit, spoken to one request at a time, and
//! killed when it breaks a rule.
//!
//! Two threads per process read its output: one takes stdout a line at a time (at most
//! `max_line_bytes`) into a channel of capacity one, so an adapter that floods its output
//! blocks on its own pipe; one reads stderr and logs it, a line at a time and cut, so it can
//! never fill its pipe and stall, and keeps its last lines, so that a process that died of its
//! memory limit is said to have (a Python `MemoryError`, a library that failed to map).
//!
//! When the process closes its stdout, the stdout thread calls the `on_end` it was given
//! before anything else, so the server frees the process's slot at once, not at the next call.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::protocol::{Method, OUT_OF_MEMORY, Reply, ReplyError, parse_reply, request_line};
use crate::text::cut;

/// Why a call to an adapter process failed; each one but [`CallFailure::Abandoned`] means the
/// process is stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallFailure {
    /// The caller stopped waiting before the adapter's own bound (a call made for completion):
    /// the process keeps running, and its answer is awaited, and dropped, before the next
    /// request; if it has not come by the call's own bound, the process is stopped then.
    #[error("the adapter did not answer {method} before completion's bound")]
    Abandoned {
        /// The method asked.
        method: &'static str,
    },
    /// The process could not be started.
    #[error("cannot start the adapter: {0}")]
    Spawn(std::io::Error),
    /// The process ran out of its address-space limit: it said so (error
    /// [`OUT_OF_MEMORY`]), or it died saying `MemoryError` or that it could not allocate or
    /// map memory, or it could not even be started within the limit.
    #[error(
        "the adapter ran out of its memory limit of {limit_mib} MiB (--adapter-memory-mib) \
         while answering {method}: {detail}"
    )]
    OutOfMemory {
        /// The method asked (`start` when the program could not be started).
        method: &'static str,
        /// The limit, in MiB.
        limit_mib: u64,
        /// What the adapter said, cut and quoted.
        detail: String,
    },
    /// The process did not answer before its deadline.
    #[error("the adapter did not answer {method} in time")]
    TimedOut {
        /// The method asked.
        method: &'static str,
    },
    /// The process closed its output (it exited or crashed).
    #[error("the adapter exited while answering {method}{status}")]
    Exited {
        /// The method asked.
        method: &'static str,
        /// How it ended, e.g. ` (exit status: 1)`, when known.
        status: String,
    },
    /// The answer was longer than the line bound.
    #[error("the adapter answered {method} with a line over {limit} bytes")]
    TooLong {
        /// The method asked.
        method: &'static str,
        /// The bound.
        limit: usize,
    },
    /// The adapter wrote a line nobody asked for.
    #[error("the adapter wrote output between requests")]
    Unsolicited,
    /// The answer was not a valid answer.
    #[error("the adapter answered {method} with garbage: {source}")]
    Garbage {
        /// The method asked.
        method: &'static str,
        /// What was wrong.
        source: ReplyError,
    },
    /// Writing the request failed (the process is gone).
    #[error("cannot send {method} to the adapter: {source}")]
    Write {
        /// The method.
        method: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// What the stdout thread saw.
enum Line {
    Text(Vec<u8>),
    TooLong,
    End,
}

/// A request whose caller stopped waiting: its answer is still due, until `kill_at`.
#[derive(Clone, Copy)]
struct Pending {
    id: u64,
    method: Method,
    kill_at: Instant,
}

/// The last lines the process wrote on stderr, and whether it closed it.
#[derive(Default)]
struct Tail {
    lines: VecDeque<String>,
    closed: bool,
}

/// Lines of stderr kept.
const TAIL_LINES: usize = 8;

/// What a process that died of its address-space limit writes: Python's `MemoryError`, the
/// C library's `ENOMEM` text, the dynamic loader's failure to map a library, C++'s
/// `bad_alloc`.
const MEMORY_MARKERS: [&str; 5] = [
    "MemoryError",
    "Cannot allocate memory",
    "failed to map segment",
    "bad_alloc",
    "out of memory",
];

/// How long, after its output closed, the process is given to exit and finish its stderr.
const EXIT_WAIT: Duration = Duration::from_millis(500);

/// Called once by the stdout thread when the process closes its output.
pub(super) type OnEnd = Box<dyn FnOnce() + Send>;

/// A running adapter.
pub(super) struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Line>,
    next_id: u64,
    max_line_bytes: usize,
    memory_bytes: u64,
    pending: Option<Pending>,
    tail: Arc<Mutex<Tail>>,
}

impl Process {
    /// Starts `command` with its address space limited to `memory_bytes` (`RLIMIT_AS`) and a
    /// death signal tied to this process; `on_end` is called when it closes its output.
    pub(super) fn start(
        mut command: Command,
        memory_bytes: u64,
        max_line_bytes: usize,
        label: &str,
        on_end: OnEnd,
    ) -> Result<Process, CallFailure> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        limit_child(&mut command, memory_bytes);
        let mut child = command.spawn().map_err(|error| {
            if error.raw_os_error() == Some(rustix::io::Errno::NOMEM.raw_os_error()) {
                CallFailure::OutOfMemory {
                    method: "start",
                    limit_mib: memory_bytes >> 20,
                    detail: Value::String(cut(&error.to_string())).to_string(),
                }
            } else {
                CallFailure::Spawn(error)
            }
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            stop(&mut child);
            return Err(CallFailure::Spawn(std::io::Error::other(
                "the adapter's pipes were not opened",
            )));
        };
        let (sender, lines) = mpsc::sync_channel(1);
        let tail = Arc::new(Mutex::new(Tail::default()));
        let started = thread::Builder::new()
            .name(format!("rea-adapter-out-{label}"))
            .spawn(move || read_lines(stdout, max_line_bytes, &sender, on_end))
            .and_then(|_| {
                let label = label.to_owned();
                let tail = Arc::clone(&tail);
                thread::Builder::new()
                    .name(format!("rea-adapter-err-{label}"))
                    .spawn(move || log_stderr(stderr, &label, &tail))
            });
        if let Err(error) = started {
            stop(&mut child);
            return Err(CallFailure::Spawn(error));
        }
        Ok(Process {
            child,
            stdin,
            lines,
            next_id: 1,
            max_line_bytes,
            memory_bytes,
            pending: None,
            tail,
        })
    }

    /// Whether the process has exited (it is reaped then).
    pub(super) fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// The failure an error answer of code [`OUT_OF_MEMORY`], or `said` on stderr, means.
    fn out_of_memory(&self, method: &'static str, said: &str) -> CallFailure {
        CallFailure::OutOfMemory {
            method,
            limit_mib: self.memory_bytes >> 20,
            detail: Value::String(end_of(said.trim())).to_string(),
        }
    }

    /// `reply`, unless it says the adapter ran out of memory.
    fn checked(&self, method: &'static str, reply: Reply) -> Result<Reply, CallFailure> {
        match reply {
            Reply::Error { code, message } if code == OUT_OF_MEMORY => {
                Err(self.out_of_memory(method, &message))
            }
            reply => Ok(reply),
        }
    }

    /// Waits, until `until` at most, for the answer of an abandoned request and drops it.
    /// `Ok(true)` when no answer is due any more, `Ok(false)` when it is still due at `until`
    /// (before its own bound); a failure (the answer is garbage, or has not come by its own
    /// bound, or the process exited) leaves the process to be stopped by the caller.
    pub(super) fn settle(&mut self, until: Instant) -> Result<bool, CallFailure> {
        let Some(pending) = self.pending else {
            return Ok(true);
        };
        let name = pending.method.name();
        let wait_until = until.min(pending.kill_at);
        let wait = wait_until.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(Line::Text(text)) => {
                self.pending = None;
                let reply = parse_reply(&text, pending.id, pending.method).map_err(|source| {
                    CallFailure::Garbage {
                        method: name,
                        source,
                    }
                })?;
                self.checked(name, reply).map(|_| true)
            }
            Ok(Line::TooLong) => Err(CallFailure::TooLong {
                method: name,
                limit: self.max_line_bytes,
            }),
            Ok(Line::End) | Err(RecvTimeoutError::Disconnected) => Err(self.exited(name)),
            Err(RecvTimeoutError::Timeout) if wait_until >= pending.kill_at => {
                Err(CallFailure::TimedOut { method: name })
            }
            Err(RecvTimeoutError::Timeout) => Ok(false),
        }
    }

    /// Sends `method` and waits for its answer until `deadline`. Any failure leaves the
    /// process to be stopped by the caller.
    pub(super) fn call(
        &mut self,
        method: Method,
        params: Value,
        deadline: Instant,
    ) -> Result<Reply, CallFailure> {
        self.call_until(method, params, deadline, deadline)
    }

    /// Sends `method` and waits for its answer until `answer_by`. When that passes before
    /// `kill_at` (the adapter's own bound plus the grace), the request is abandoned
    /// ([`CallFailure::Abandoned`]: the process keeps running, and [`Process::settle`] takes
    /// its answer); any other failure leaves the process to be stopped by the caller. No
    /// answer may be due ([`Process::settle`] first).
    pub(super) fn call_until(
        &mut self,
        method: Method,
        params: Value,
        answer_by: Instant,
        kill_at: Instant,
    ) -> Result<Reply, CallFailure> {
        let name = method.name();
        match self.lines.try_recv() {
            Err(mpsc::TryRecvError::Empty) => {}
            Ok(Line::End) | Err(mpsc::TryRecvError::Disconnected) => {
                return Err(self.exited(name));
            }
            Ok(_) => return Err(CallFailure::Unsolicited),
        }
        let id = self.next_id;
        self.next_id += 1;
        let mut line = request_line(id, method, params);
        line.push('\n');
        let written = self
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.flush());
        if let Err(source) = written {
            // The process is gone: perhaps it could not even start within its limit.
            self.wait_for_end();
            return Err(self.memory_said(name).unwrap_or(CallFailure::Write {
                method: name,
                source,
            }));
        }
        let wait = answer_by.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(Line::Text(text)) => {
                let reply =
                    parse_reply(&text, id, method).map_err(|source| CallFailure::Garbage {
                        method: name,
                        source,
                    })?;
                self.checked(name, reply)
            }
            Ok(Line::TooLong) => Err(CallFailure::TooLong {
                method: name,
                limit: self.max_line_bytes,
            }),
            Ok(Line::End) | Err(RecvTimeoutError::Disconnected) => Err(self.exited(name)),
            Err(RecvTimeoutError::Timeout) if answer_by < kill_at => {
                self.pending = Some(Pending {
                    id,
                    method,
                    kill_at,
                });
                Err(CallFailure::Abandoned { method: name })
            }
            Err(RecvTimeoutError::Timeout) => Err(CallFailure::TimedOut { method: name }),
        }
    }

    fn exited(&mut self, method: &'static str) -> CallFailure {
        // The output closed: the process has exited or is about to.
        let status = self.wait_for_end();
        self.memory_said(method)
            .unwrap_or_else(|| CallFailure::Exited {
                method,
                status: status.map_or_else(String::new, |s| format!(" ({s})")),
            })
    }

    /// Gives a process that is ending [`EXIT_WAIT`] to exit and finish writing why on
    /// stderr; its exit status, if it exited.
    fn wait_for_end(&mut self) -> Option<std::process::ExitStatus> {
        let until = Instant::now() + EXIT_WAIT;
        let mut status = None;
        loop {
            if status.is_none()
                && let Ok(Some(code)) = self.child.try_wait()
            {
                status = Some(code);
            }
            let closed = self
                .tail
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .closed;
            if (status.is_some() && closed) || Instant::now() >= until {
                return status;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// [`CallFailure::OutOfMemory`], when the last lines of stderr say the process ran out
    /// of memory.
    fn memory_said(&self, method: &'static str) -> Option<CallFailure> {
        let said = self
            .tail
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .lines
            .iter()
            .rev()
            .find(|line| MEMORY_MARKERS.iter().any(|marker| line.contains(marker)))
            .cloned()?;
        Some(self.out_of_memory(method, &said))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

/// Kills and reaps `child`.
fn stop(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Sets the child's address-space limit and asks the kernel to kill it when this process
/// dies, between `fork` and `exec`.
#[allow(unsafe_code)]
fn limit_child(command: &mut Command, memory_bytes: u64) {
    use std::os::unix::process::CommandExt;
    let limit = rustix::process::Rlimit {
        current: Some(memory_bytes),
        maximum: Some(memory_bytes),
    };
    // SAFETY: the closure runs in the child between fork and exec and only makes two system
    // calls through rustix (setrlimit, prctl), which allocate nothing and take no lock, so
    // it is async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            rustix::process::setrlimit(rustix::process::Resource::As, limit)?;
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            Ok(())
        });
    }
}

/// The stdout thread: one line at a time into `sender`, until the pipe closes (then `on_end`
/// is called, and the end sent), a line is too long, or nobody listens.
fn read_lines(stdout: impl Read, max_line_bytes: usize, sender: &SyncSender<Line>, on_end: OnEnd) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        let limit = u64::try_from(max_line_bytes)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        match reader.by_ref().take(limit).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => {
                on_end();
                let _ = sender.send(Line::End);
                return;
            }
            Ok(_) => {}
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        } else if line.len() > max_line_bytes {
            let _ = sender.send(Line::TooLong);
            return;
        }
        if sender.send(Line::Text(line)).is_err() {
            return;
        }
    }
}

/// The end of `text`, as much as [`cut`] keeps of its start: the end of what a process that
/// ran out of memory says is why (`...: failed to map segment from shared object`).
fn end_of(text: &str) -> String {
    let chars = text.chars().count();
    if chars <= crate::text::QUOTED_CHARS {
        return text.to_owned();
    }
    let start: String = text
        .chars()
        .skip(chars - crate::text::QUOTED_CHARS)
        .collect();
    format!("...{start}")
}

/// Most bytes of one stderr line that are logged.
const LOGGED_LINE_BYTES: usize = 512;

/// The stderr thread: logs each line (cut) at debug level and keeps the last
/// [`TAIL_LINES`] in `tail`, until the pipe closes.
fn log_stderr(stderr: impl Read, label: &str, tail: &Mutex<Tail>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = u64::try_from(LOGGED_LINE_BYTES).unwrap_or(u64::MAX);
        match reader.by_ref().take(limit).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => {
                tail.lock().unwrap_or_else(PoisonError::into_inner).closed = true;
                return;
            }
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                let text = text.trim_end();
                tracing::debug!(adapter = label, "{text}");
                let mut kept = tail.lock().unwrap_or_else(PoisonError::into_inner);
                if kept.lines.len() == TAIL_LINES {
                    kept.lines.pop_front();
                }
                kept.lines.push_back(text.to_owned());
            }
        }
    }
}
