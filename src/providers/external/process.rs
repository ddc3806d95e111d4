//! One adapter process: started with a memory limit, spoken to one request at a time, and
//! killed when it breaks a rule.
//!
//! Two threads per process read its output: one takes stdout a line at a time (at most
//! `max_line_bytes`) into a channel of capacity one, so an adapter that floods its output
//! blocks on its own pipe; one reads stderr and logs it, a line at a time and cut, so it can
//! never fill its pipe and stall.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::thread;
use std::time::Instant;

use serde_json::Value;

use super::protocol::{Method, Reply, ReplyError, parse_reply, request_line};

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

/// A running adapter.
pub(super) struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Line>,
    next_id: u64,
    max_line_bytes: usize,
    pending: Option<Pending>,
}

impl Process {
    /// Starts `command` with its address space limited to `memory_bytes` (`RLIMIT_AS`) and a
    /// death signal tied to this process.
    pub(super) fn start(
        mut command: Command,
        memory_bytes: u64,
        max_line_bytes: usize,
        label: &str,
    ) -> Result<Process, CallFailure> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        limit_child(&mut command, memory_bytes);
        let mut child = command.spawn().map_err(CallFailure::Spawn)?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            stop(&mut child);
            return Err(CallFailure::Spawn(std::io::Error::other(
                "the adapter's pipes were not opened",
            )));
        };
        let (sender, lines) = mpsc::sync_channel(1);
        let started = thread::Builder::new()
            .name(format!("rea-adapter-out-{label}"))
            .spawn(move || read_lines(stdout, max_line_bytes, &sender))
            .and_then(|_| {
                let label = label.to_owned();
                thread::Builder::new()
                    .name(format!("rea-adapter-err-{label}"))
                    .spawn(move || log_stderr(stderr, &label))
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
            pending: None,
        })
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
                parse_reply(&text, pending.id, pending.method)
                    .map(|_| true)
                    .map_err(|source| CallFailure::Garbage {
                        method: name,
                        source,
                    })
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
        self.stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.flush())
            .map_err(|source| CallFailure::Write {
                method: name,
                source,
            })?;
        let wait = answer_by.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(Line::Text(text)) => {
                parse_reply(&text, id, method).map_err(|source| CallFailure::Garbage {
                    method: name,
                    source,
                })
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
        // The output closed: the process has exited or is about to; give it a moment.
        let until = Instant::now() + std::time::Duration::from_millis(200);
        let mut status = None;
        while Instant::now() < until {
            if let Ok(Some(code)) = self.child.try_wait() {
                status = Some(code);
                break;
            }
            thread::sleep(std::time::Duration::from_millis(5));
        }
        CallFailure::Exited {
            method,
            status: status.map_or_else(String::new, |s| format!(" ({s})")),
        }
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

/// The stdout thread: one line at a time into `sender`, until the pipe closes, a line is too
/// long, or nobody listens.
fn read_lines(stdout: impl Read, max_line_bytes: usize, sender: &SyncSender<Line>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        let limit = u64::try_from(max_line_bytes)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        match reader.by_ref().take(limit).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => {
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

/// Most bytes of one stderr line that are logged.
const LOGGED_LINE_BYTES: usize = 512;

/// The stderr thread: logs each line (cut) at debug level, until the pipe closes.
fn log_stderr(stderr: impl Read, label: &str) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = u64::try_from(LOGGED_LINE_BYTES).unwrap_or(u64::MAX);
        match reader.by_ref().take(limit).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                tracing::debug!(adapter = label, "{}", text.trim_end());
            }
        }
    }
}
