//! The tracer's output, read as untrusted input: `strace -f -q -i -ttt -k` lines (the traced
//! program shares the machine with the tracer, so nothing here trusts a line to be well
//! formed). [`parse_trace`] turns a bounded transcript into capture events, the fault of a
//! fatal signal with its stack, and the number of processes started; it never fails and never
//! panics, whatever the bytes.
//!
//! A line is `PID SECONDS.MICROS [IP] REST`, where `REST` is a system call
//! (`openat(AT_FDCWD, "/etc/passwd", O_RDONLY) = 3`), a signal
//! (`--- SIGSEGV {si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=NULL} ---`) or an exit
//! (`+++ exited with 1 +++`, `+++ killed by SIGSEGV (core dumped) +++`); a stack frame printed
//! by `-k` is ` > MODULE(SYMBOL+0xOFF) [0xMODULE_OFFSET]`. Lines before the first successful
//! `execve` of the program are the sandbox's own set-up and are left out.

use serde_json::{Map, Value, json};

/// Most events a capture keeps (the schema allows 10,000); later ones are counted in a note.
pub const MAX_EVENTS: usize = 1_024;

/// Most system calls kept as `note` events (files, processes and network are kept as their
/// own kinds and count towards [`MAX_EVENTS`] only).
pub const MAX_SYSCALL_NOTES: usize = 256;

/// Most stack frames kept for a fault.
pub const MAX_FRAMES: usize = 64;

/// Longest text kept from a line (characters).
const MAX_TEXT: usize = 512;

/// One frame of a fault's stack, as `strace -k` printed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The module (executable or library) path.
    pub module: String,
    /// The symbol and offset, when the tracer knew it (`deep+0xc`).
    pub symbol: Option<String>,
    /// The address relative to the module's load address (for a position-independent
    /// executable, its link-time address).
    pub offset: u64,
}

/// A fatal-signal delivery seen by the tracer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The process that received it.
    pub pid: u64,
    /// The signal name (`SIGSEGV`).
    pub signal: String,
    /// The faulting address (`si_addr`) as printed (`0x0` for `NULL`), when given.
    pub address: Option<u64>,
    /// The instruction pointer when the signal was delivered.
    pub instruction: Option<u64>,
    /// The stack, innermost first.
    pub frames: Vec<Frame>,
}

/// What a transcript says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    /// Capture events (without `seq`, which the capture assigns), in order, at most
    /// [`MAX_EVENTS`].
    pub events: Vec<Map<String, Value>>,
    /// Events left out past [`MAX_EVENTS`].
    pub events_left_out: usize,
    /// The first SIGSEGV, SIGBUS, SIGILL or SIGFPE delivered, with its stack.
    pub fault: Option<Fault>,
    /// Processes started after the program's `execve` (successful `clone`, `fork`, `vfork`).
    pub processes_started: u64,
    /// Whether a system call failed with `ENOMEM` or `EAGAIN` from `clone`/`fork` (a memory or
    /// process limit was met).
    pub memory_refused: bool,
    /// Whether a process start was refused (`EAGAIN` from `clone`, `fork`, `vfork`).
    pub process_refused: bool,
    /// How the program's own process ended (`+++ exited with 3 +++` for the process that
    /// executed the program), when the transcript says.
    pub program_exit: Option<Exit>,
}

/// How the sandboxed program ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code.
    Code(i64),
    /// This signal ended it (`SIGSEGV`).
    Signal(String),
}

/// The signals whose fault address and instruction address a capture records.
pub const FAULT_SIGNALS: [&str; 4] = ["SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"];

/// A parsed line.
#[derive(Debug, PartialEq)]
enum Line<'a> {
    /// A stack frame (` > ...`).
    Frame(Frame),
    /// A process's line.
    Process {
        pid: u64,
        micros: u64,
        ip: Option<u64>,
        rest: &'a str,
    },
    /// Anything else.
    Other,
}

/// Parses the transcript of one run, whose program is `program` (its path as the sandbox
/// sees it). Total: any bytes give a [`Trace`].
pub fn parse_trace(transcript: &[u8], program: &str) -> Trace {
    let text = String::from_utf8_lossy(transcript);
    let mut trace = Trace::default();
    let mut started: Option<u64> = None;
    let mut program_pid: Option<u64> = None;
    let mut notes = 0usize;
    let mut in_fault = false;
    // Processes of the sandbox's own set-up (seen before the program started).
    let mut setup: Vec<u64> = Vec::new();
    for raw in text.lines() {
        let line = parse_line(raw);
        let (pid, micros, ip, rest) = match line {
            Line::Frame(frame) => {
                if in_fault
                    && let Some(fault) = trace.fault.as_mut()
                    && fault.frames.len() < MAX_FRAMES
                {
                    fault.frames.push(frame);
                }
                continue;
            }
            Line::Other => {
                in_fault = false;
                continue;
            }
            Line::Process {
                pid,
                micros,
                ip,
                rest,
            } => (pid, micros, ip, rest),
        };
        in_fault = false;
        let Some(start) = started else {
            if let Some(path) = call_of(rest, "execve").and_then(first_string)
                && path == program
                && succeeded(rest)
            {
                started = Some(micros);
                program_pid = Some(pid);
                setup.retain(|&seen| seen != pid);
                let event = event("file", 0, pid)
                    .with("path", bounded(&path))
                    .with("access", "execute");
                push(&mut trace, event);
            } else if !setup.contains(&pid) && setup.len() < 64 {
                setup.push(pid);
            }
            continue;
        };
        if setup.contains(&pid) {
            continue;
        }
        let t_ms = micros.saturating_sub(start) / 1_000;
        if let Some(signal) = signal_of(rest) {
            let mut signal_event = event("signal", t_ms, pid).with("signal", signal.name.clone());
            if let Some(address) = signal.address {
                signal_event = signal_event.with("address", format!("{address:#x}"));
            }
            push(&mut trace, signal_event);
            if trace.fault.is_none() && FAULT_SIGNALS.contains(&signal.name.as_str()) {
                trace.fault = Some(Fault {
                    pid,
                    signal: signal.name,
                    address: signal.address,
                    instruction: ip,
                    frames: Vec::new(),
                });
                in_fault = true;
            }
            continue;
        }
        if let Some(exit) = exit_of(rest) {
            let exit_event = match &exit {
                Exit::Code(code) => event("exit", t_ms, pid).with("code", *code),
                Exit::Signal(name) => event("exit", t_ms, pid).with("signal", name.clone()),
            };
            push(&mut trace, exit_event);
            if program_pid == Some(pid) {
                trace.program_exit = Some(exit);
            }
            continue;
        }
        let Some((name, args)) = syscall(rest) else {
            continue;
        };
        let result = result_of(rest);
        match name {
            "clone" | "clone3" | "fork" | "vfork" => match result {
                Some(Returned::Value(child)) if child > 0 => {
                    trace.processes_started += 1;
                    push(&mut trace, event("spawn", t_ms, child.unsigned_abs()));
                }
                Some(Returned::Failed(error)) => {
                    if error == "EAGAIN" {
                        trace.process_refused = true;
                    }
                    if error == "ENOMEM" {
                        trace.memory_refused = true;
                    }
                    note(&mut trace, &mut notes, t_ms, pid, rest);
                }
                _ => {}
            },
            "open" | "openat" | "creat" | "execve" | "unlink" | "unlinkat" | "mkdir"
            | "mkdirat" | "rename" | "renameat" | "renameat2" => {
                let path = first_string(args);
                match (path, result) {
                    (Some(path), Some(Returned::Value(_))) => {
                        let access = access_of(name, args);
                        let file = event("file", t_ms, pid)
                            .with("path", bounded(&path))
                            .with("access", access);
                        push(&mut trace, file);
                    }
                    _ => note(&mut trace, &mut notes, t_ms, pid, rest),
                }
            }
            "connect" | "bind" | "listen" | "accept" | "accept4" => {
                let direction = match name {
                    "connect" => "connect",
                    "listen" | "bind" => "listen",
                    _ => "accept",
                };
                let mut network = event("network", t_ms, pid)
                    .with("address", bounded(&socket_address(args)))
                    .with("direction", direction);
                if let Some(Returned::Failed(error)) = result {
                    // An error name is a short word; the transcript is untrusted.
                    let error: String = error.chars().take(32).collect();
                    network = network.with("text", format!("failed: {error}"));
                }
                push(&mut trace, network);
            }
            _ => {
                if let Some(Returned::Failed("ENOMEM")) = result {
                    trace.memory_refused = true;
                }
                note(&mut trace, &mut notes, t_ms, pid, rest);
            }
        }
    }
    trace
}

/// An event under construction.
struct Event(Map<String, Value>);

impl Event {
    fn with(mut self, key: &str, value: impl Into<Value>) -> Event {
        self.0.insert(key.to_owned(), value.into());
        self
    }
}

fn event(kind: &str, t_ms: u64, pid: u64) -> Event {
    let mut map = Map::new();
    map.insert("t_ms".to_owned(), json!(t_ms.min(86_400_000)));
    map.insert("kind".to_owned(), json!(kind));
    map.insert("pid".to_owned(), json!(pid.min(4_294_967_295)));
    Event(map)
}

fn push(trace: &mut Trace, event: Event) {
    if trace.events.len() < MAX_EVENTS {
        trace.events.push(event.0);
    } else {
        trace.events_left_out += 1;
    }
}

fn note(trace: &mut Trace, notes: &mut usize, t_ms: u64, pid: u64, rest: &str) {
    if *notes >= MAX_SYSCALL_NOTES {
        return;
    }
    *notes += 1;
    push(trace, event("note", t_ms, pid).with("text", bounded(rest)));
}

/// `text` cut to [`MAX_TEXT`] characters (with an ellipsis), never empty.
fn bounded(text: &str) -> String {
    // Cut at the byte where the character after the first MAX_TEXT begins, if there is one
    // (a text of at most MAX_TEXT bytes has no more characters than that).
    let cut = if text.len() <= MAX_TEXT {
        None
    } else {
        text.char_indices().nth(MAX_TEXT).map(|(at, _)| at)
    };
    let mut out = match cut {
        Some(at) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    };
    if out.is_empty() {
        out.push('?');
    }
    out
}

fn parse_line(raw: &str) -> Line<'_> {
    if let Some(frame) = raw.trim_start().strip_prefix("> ") {
        return parse_frame(frame).map_or(Line::Other, Line::Frame);
    }
    // strace pads the PID to a width: `9651  1796219986.123268 [...] ...`.
    let Some((pid, after)) = raw.trim_start().split_once(' ') else {
        return Line::Other;
    };
    let Some((time, rest)) = after.trim_start().split_once(' ') else {
        return Line::Other;
    };
    let Ok(pid) = pid.parse::<u64>() else {
        return Line::Other;
    };
    let Some(micros) = micros_of(time) else {
        return Line::Other;
    };
    let (ip, rest) = match rest.strip_prefix('[').and_then(|r| r.split_once("] ")) {
        Some((ip, rest)) => (u64::from_str_radix(ip, 16).ok(), rest),
        None => (None, rest),
    };
    Line::Process {
        pid,
        micros,
        ip,
        rest,
    }
}

/// `SECONDS.MICROS` as microseconds.
fn micros_of(time: &str) -> Option<u64> {
    let (seconds, fraction) = time.split_once('.')?;
    let seconds: u64 = seconds.parse().ok()?;
    if fraction.len() != 6 {
        return None;
    }
    let fraction: u64 = fraction.parse().ok()?;
    seconds.checked_mul(1_000_000)?.checked_add(fraction)
}

/// `MODULE(SYMBOL+0xOFF) [0xOFFSET]` or `MODULE() [0xOFFSET]`.
fn parse_frame(frame: &str) -> Option<Frame> {
    let (head, offset) = frame.rsplit_once(" [")?;
    let offset = hex(offset.strip_suffix(']')?)?;
    let open = head.rfind('(')?;
    let symbol = head[open + 1..].strip_suffix(')')?;
    let module = &head[..open];
    if module.is_empty() {
        return None;
    }
    Some(Frame {
        module: bounded(module),
        symbol: (!symbol.is_empty()).then(|| bounded(symbol)),
        offset,
    })
}

fn hex(text: &str) -> Option<u64> {
    u64::from_str_radix(text.strip_prefix("0x")?, 16).ok()
}

/// The arguments of `rest` when it is a call of `name` (`name(ARGS) = ...`, or an
/// unfinished call).
fn call_of<'a>(rest: &'a str, name: &str) -> Option<&'a str> {
    let (found, args) = syscall(rest)?;
    (found == name).then_some(args)
}

/// The name and the text after the opening parenthesis of a system call line (or after
/// `resumed>` of a resumed one).
fn syscall(rest: &str) -> Option<(&str, &str)> {
    let (name, args) = match rest.strip_prefix("<... ") {
        Some(resumed) => resumed.split_once(" resumed>")?,
        None => {
            let open = rest.find('(')?;
            (&rest[..open], &rest[open + 1..])
        }
    };
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_');
    valid.then_some((name, args))
}

/// Whether `line` is the successful `execve` of `program` (where a run's own events begin).
pub fn is_program_start(line: &str, program: &str) -> bool {
    match parse_line(line) {
        Line::Process { rest, .. } => {
            call_of(rest, "execve").and_then(first_string).as_deref() == Some(program)
                && succeeded(rest)
        }
        _ => false,
    }
}

/// Whether `line` is a successful `clone`, `clone3`, `fork` or `vfork` (a process started).
pub fn is_process_start(line: &str) -> bool {
    match parse_line(line) {
        Line::Process { rest, .. } => {
            matches!(
                syscall(rest),
                Some(("clone" | "clone3" | "fork" | "vfork", _))
            ) && matches!(result_of(rest), Some(Returned::Value(child)) if child > 0)
        }
        _ => false,
    }
}

/// What a finished system call returned, as strace prints it.
#[derive(Debug, PartialEq, Eq)]
enum Returned<'a> {
    /// A value (decimal or `0x` hexadecimal).
    Value(i64),
    /// A failure, with strace's name of the error (`ENOENT`).
    Failed(&'a str),
}

/// The result of a finished call.
fn result_of(rest: &str) -> Option<Returned<'_>> {
    let (_, result) = rest.rsplit_once(") = ")?;
    let mut words = result.split_whitespace();
    let value = words.next()?;
    if value.starts_with('-') {
        return words.next().map(Returned::Failed);
    }
    if let Some(hex_value) = value.strip_prefix("0x") {
        return i64::from_str_radix(hex_value, 16).ok().map(Returned::Value);
    }
    value.parse().ok().map(Returned::Value)
}

fn succeeded(rest: &str) -> bool {
    matches!(result_of(rest), Some(Returned::Value(_)))
}

/// The first quoted string among `args`, with strace's escapes undone where simple.
fn first_string(args: &str) -> Option<String> {
    let start = args.find('"')?;
    let mut out = String::new();
    let mut chars = args[start + 1..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return (!out.is_empty()).then_some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                other => out.push(other),
            },
            c => out.push(c),
        }
        if out.len() > 4_096 {
            return None;
        }
    }
    None
}

/// What an open asks for.
fn access_of(name: &str, args: &str) -> &'static str {
    match name {
        "execve" => "execute",
        "unlink" | "unlinkat" => "delete",
        "creat" | "mkdir" | "mkdirat" | "rename" | "renameat" | "renameat2" => "create",
        _ if args.contains("O_CREAT") => "create",
        _ if args.contains("O_WRONLY") || args.contains("O_RDWR") => "write",
        _ => "read",
    }
}

/// A socket address as strace prints it, shortened to `ADDR:PORT` for IP sockets.
fn socket_address(args: &str) -> String {
    let quoted = |key: &str| -> Option<String> {
        let at = args.find(key)? + key.len();
        let end = args[at..].find('"')?;
        Some(args[at..at + end].to_owned())
    };
    let port = args.find("htons(").and_then(|at| {
        let rest = &args[at + 6..];
        rest[..rest.find(')')?].parse::<u16>().ok()
    });
    let host = quoted("inet_addr(\"").or_else(|| quoted("inet_pton(AF_INET6, \""));
    match (host, port) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        _ => quoted("sun_path=\"").unwrap_or_else(|| "unknown".to_owned()),
    }
}

struct Signal {
    name: String,
    address: Option<u64>,
}

/// `--- SIGSEGV {si_signo=SIGSEGV, ..., si_addr=0x10} ---`.
fn signal_of(rest: &str) -> Option<Signal> {
    let body = rest.strip_prefix("--- ")?.strip_suffix(" ---")?;
    let name = body.split_whitespace().next()?;
    if !signal_name(name) {
        return None;
    }
    let address = body.find("si_addr=").and_then(|at| {
        let value = &body[at + 8..];
        let end = value.find([',', '}']).unwrap_or(value.len());
        match &value[..end] {
            "NULL" => Some(0),
            other => hex(other),
        }
    });
    Some(Signal {
        name: name.to_owned(),
        address,
    })
}

/// Whether `name` fits the capture schema's signal pattern.
fn signal_name(name: &str) -> bool {
    name.strip_prefix("SIG").is_some_and(|rest| {
        (1..=16).contains(&rest.len())
            && rest
                .bytes()
                .all(|byte| byte.is_ascii_uppercase() || byte.is_ascii_digit())
    })
}

/// `+++ exited with N +++` or `+++ killed by SIGNAL [(core dumped)] +++`.
fn exit_of(rest: &str) -> Option<Exit> {
    let body = rest.strip_prefix("+++ ")?.strip_suffix(" +++")?;
    if let Some(code) = body.strip_prefix("exited with ") {
        return code.parse().ok().map(Exit::Code);
    }
    let name = body.strip_prefix("killed by ")?.split_whitespace().next()?;
    signal_name(name).then(|| Exit::Signal(name.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRANSCRIPT: &str = "\
100  1700000000.000000 [00007f00aa1c5ad7] execve(\"/usr/bin/bwrap\", [\"bwrap\"], 0x1 /* 1 vars */) = 0
102 1700000000.100000 [00007f00aa1c5ad7] execve(\"/w/segv\", [\"/w/segv\"], 0x1 /* 1 vars */) = 0
102 1700000000.101000 [00007f00aa1c5ad7] openat(AT_FDCWD, \"/etc/ld.so.cache\", O_RDONLY|O_CLOEXEC) = 3
102 1700000000.102000 [00007f00aa1c5ad7] openat(AT_FDCWD, \"/secret\", O_RDONLY) = -1 ENOENT (No such file or directory)
102 1700000000.103000 [00007f00aa1c5ad7] connect(3, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr(\"127.0.0.1\")}, 16) = -1 ECONNREFUSED (Connection refused)
102 1700000000.104000 [00005619affdd145] --- SIGSEGV {si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=NULL} ---
 > /w/segv(deep+0xc) [0x1145]
 > /w/segv(mid+0x18) [0x1166]
 > /usr/lib/libc.so.6() [0x27305]
102 1700000000.105000 [????????????????] +++ killed by SIGSEGV (core dumped) +++
";

    #[test]
    fn a_crash_gives_its_fault_stack_and_events() {
        let trace = parse_trace(TRANSCRIPT.as_bytes(), "/w/segv");
        let fault = trace.fault.unwrap();
        assert_eq!(fault.signal, "SIGSEGV");
        assert_eq!(fault.address, Some(0));
        assert_eq!(fault.instruction, Some(0x5619_affd_d145));
        assert_eq!(fault.frames.len(), 3);
        assert_eq!(fault.frames[0].offset, 0x1145);
        assert_eq!(fault.frames[0].symbol.as_deref(), Some("deep+0xc"));
        assert_eq!(fault.frames[2].symbol, None);
        let kinds: Vec<&str> = trace
            .events
            .iter()
            .map(|event| event["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["file", "file", "note", "network", "signal", "exit"]);
        assert_eq!(trace.events[3]["address"], "127.0.0.1:8080");
        assert_eq!(trace.events[5]["signal"], "SIGSEGV");
        assert_eq!(trace.events[5]["t_ms"], 5);
        assert_eq!(trace.program_exit, Some(Exit::Signal("SIGSEGV".to_owned())));
    }

    /// The end of the transcript of a run whose tracer died (`strace: walk: cannot initialize
    /// libunwind`) after the program, seen under load: the program's child exited 0, the
    /// program 3, the outer bwrap passed 3 on, and bwrap's init was killed mid-unwind.
    #[test]
    fn the_programs_own_end_is_its_exit_whatever_its_children_and_the_sandbox_did() {
        let transcript = "\
7 1.000000 [00007f00aa1c5ad7] execve(\"/usr/bin/bwrap\", [\"bwrap\"], 0x1 /* 1 vars */) = 0
10 1.100000 [00007f00aa1c5ad7] execve(\"/w/hog\", [\"/w/hog\"], 0x1 /* 1 vars */) = 0
10 1.200000 [00007f00aa1c5ad7] clone(child_stack=NULL, flags=SIGCHLD) = 11
11 1.300000 [????????????????] +++ exited with 0 +++
10 1.400000 [????????????????] +++ exited with 3 +++
9 1.500000 [00007f00aa1c5bd3] wait4(-1, [{WIFEXITED(s) && WEXITSTATUS(s) == 3}], 0, NULL) = 2
7 1.600000 [00007f00aa1c6409] exit_group(3 <unfinished ...>
9 1.700000 [????????????????] +++ killed by SIGKILL +++
";
        let trace = parse_trace(transcript.as_bytes(), "/w/hog");
        assert_eq!(trace.program_exit, Some(Exit::Code(3)));
        let without_its_end = transcript.replace("+++ exited with 3 +++", "write(1) = 1");
        let trace = parse_trace(without_its_end.as_bytes(), "/w/hog");
        assert_eq!(trace.program_exit, None);
    }

    #[test]
    fn bounded_keeps_the_first_characters_whatever_their_width() {
        let naive = |text: &str| {
            let mut out: String = text.chars().take(MAX_TEXT).collect();
            if text.chars().nth(MAX_TEXT).is_some() {
                out.push('…');
            }
            if out.is_empty() {
                out.push('?');
            }
            out
        };
        for unit in ["a", "é", "€", "𝄞"] {
            for count in [0, 1, MAX_TEXT - 1, MAX_TEXT, MAX_TEXT + 1, 3 * MAX_TEXT] {
                for tail in ["", "a", "𝄞"] {
                    let text = format!("{}{tail}", unit.repeat(count));
                    assert_eq!(
                        bounded(&text),
                        naive(&text),
                        "{count} x {unit:?} + {tail:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn nothing_before_the_programs_execve_counts() {
        let trace = parse_trace(b"1 1.000000 [0] clone() = 5\n", "/p");
        assert_eq!(trace, Trace::default());
    }
}
