//! `run_process_capture`: runs a program (an open document or a path under the roots) in the
//! capture sandbox ([`crate::capture::sandbox`]), within bounds, after approval, and retains
//! the Process Capture v4 document it makes as Evidence (operation
//! [`RUN_OPERATION`](crate::capture::RUN_OPERATION)), so the Process capture completion family
//! offers it and `verify_reconstruction` reads it.
//!
//! Order: the arguments are checked, then the sandbox (nothing runs when it cannot be built),
//! then the approval (nothing runs without it); a run that is refused, declined, cancelled or
//! fails commits nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::Digest;

use super::capture_approval::{self, Found, Proposal, rfc3339};
use super::definition::ToolAnnotations;
use super::outcome::ToolError;
use super::spec::{Handler, Retained, ToolSpec};
use crate::base::files::{CheckedFile, FileLimit};
use crate::capture::sandbox::{self, Bounds, Ended, Exit, Outcome, StreamCapture, WORK_DIR};
use crate::capture::trace::{self, Trace};
use crate::capture::{
    CAPTURE_SCHEMA, CAPTURE_VERSION, CaptureApproval, MAX_STDIN_BYTES, RunCaptureError,
};
use crate::session::{Address, Cancel, Session, Target};
use crate::text::{Quoted, hex};

/// Default and most seconds of wall time.
pub const TIMEOUT_SECS: (u64, u64) = (10, 120);
/// Default and most bytes kept per output stream.
pub const OUTPUT_BYTES: (u64, u64) = (64 << 10, 4 << 20);
/// Default and most MiB of address space per process.
pub const MEMORY_MIB: (u64, u64) = (512, 4_096);
/// Default and most processes (the program included).
pub const PROCESSES: (u64, u64) = (16, 256);

/// Environment variables that may be inherited from the server's environment by name.
pub const INHERITABLE: &[&str] = &["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ"];

/// The arguments of `run_process_capture`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct RunCaptureArguments {
    /// What to run: the name of a document of the open binary (its file is run), or the path
    /// of an executable file under the roots.
    #[schemars(length(min = 1, max = 4096))]
    program: String,
    /// Arguments after the program's name (at most 64, each at most 4,096 characters).
    #[serde(default)]
    #[schemars(length(max = 64), inner(length(max = 4096)))]
    arguments: Vec<String>,
    /// Text written to the program's standard input, then closed (at most 64 KiB).
    #[schemars(length(max = 65536))]
    stdin: Option<String>,
    /// Names of variables the program inherits from the server's environment, from the
    /// allowlist PATH, LANG, LC_ALL, LC_CTYPE, TERM, TZ.
    #[serde(default)]
    #[schemars(length(max = 6))]
    inherit_environment: Vec<String>,
    /// Explicit variables, name to string value (at most 64); nothing else is inherited.
    #[serde(default)]
    environment: Map<String, Value>,
    /// Wall time in seconds (default 10, at most 120).
    #[serde(default = "default_timeout")]
    #[schemars(range(min = 1, max = 120))]
    timeout_secs: u64,
    /// Bytes kept per output stream; more ends the run (default 65,536, at most 4 MiB).
    #[serde(default = "default_output")]
    #[schemars(range(min = 1, max = 4_194_304))]
    max_output_bytes: u64,
    /// Address space of each process, in MiB (default 512, at most 4,096).
    #[serde(default = "default_memory")]
    #[schemars(range(min = 16, max = 4096))]
    max_memory_mib: u64,
    /// Processes the program may have at once, itself included (default 16, at most 256).
    #[serde(default = "default_processes")]
    #[schemars(range(min = 1, max = 256))]
    max_processes: u64,
}

fn default_timeout() -> u64 {
    TIMEOUT_SECS.0
}
fn default_output() -> u64 {
    OUTPUT_BYTES.0
}
fn default_memory() -> u64 {
    MEMORY_MIB.0
}
fn default_processes() -> u64 {
    PROCESSES.0
}

/// The capture tool, for the catalog.
pub(super) fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: crate::capture::RUN_OPERATION,
        title: "Run Process Capture",
        description: "Run a program (a document of the open binary, or an executable under the \
        roots) once, after approval, in a sandbox (bubblewrap: no network, a read-only view of \
        /usr, /etc, /lib and the program's directory, an empty writable working directory \
        removed afterwards; traced by strace), within bounds: timeout_secs (default 10, at \
        most 120), max_output_bytes per stream (default 64 KiB, at most 4 MiB), max_memory_mib \
        (default 512), max_processes (default 16). Nothing runs without approval: the \
        person's, asked through MCP elicitation (the program, arguments, input, environment, \
        bounds and sandbox are shown; only accept runs it), or the operator's (rea serve \
        --approve-captures). The Process Capture v4 document \
        (exit code or signal, stream digests and heads, events: processes, files, network, \
        signals, the first system calls) is retained as Evidence; a fault (SIGSEGV, SIGBUS, \
        SIGILL, SIGFPE) gives its address, the instruction's, and the procedures of the open \
        document on its stack. ended_by names the bound that ended the run, if one did.",
        annotations: ToolAnnotations {
            read_only_hint: false,
            destructive_hint: false,
            idempotent_hint: false,
            open_world_hint: false,
        },
        handler: Handler::retain(run_process_capture),
    }]
}

/// The program to run.
struct Program {
    /// Its real path.
    path: PathBuf,
    sha256: String,
    /// The open document it is, if any.
    document: Option<String>,
}

fn run_process_capture(
    session: &Session,
    arguments: RunCaptureArguments,
    cancel: &Cancel,
) -> Result<Retained<RunCaptureResult>, ToolError> {
    run(session, arguments, cancel).map_err(ToolError::from)
}

fn run(
    session: &Session,
    arguments: RunCaptureArguments,
    cancel: &Cancel,
) -> Result<Retained<RunCaptureResult>, RunCaptureError> {
    let stdin = arguments.stdin.unwrap_or_default().into_bytes();
    if stdin.len() > MAX_STDIN_BYTES {
        return Err(RunCaptureError::Stdin { bytes: stdin.len() });
    }
    let environment = environment(&arguments.inherit_environment, &arguments.environment)?;
    let program = resolve(session, &arguments.program)?;
    let tools = sandbox::probe()?;
    let bounds = Bounds {
        wall_time: Duration::from_secs(arguments.timeout_secs),
        output_bytes: arguments.max_output_bytes,
        memory_mib: arguments.max_memory_mib,
        processes: arguments.max_processes,
    };
    let proposal = Proposal {
        program: program.path.to_string_lossy().into_owned(),
        sha256: program.sha256.clone(),
        document: program.document.clone(),
        arguments: arguments.arguments.clone(),
        stdin_bytes: stdin.len(),
        stdin_sha256: hex(&sha2::Sha256::digest(&stdin)),
        environment: environment.clone(),
        timeout_secs: arguments.timeout_secs,
        max_output_bytes: arguments.max_output_bytes,
        max_memory_mib: arguments.max_memory_mib,
        max_processes: arguments.max_processes,
        sandbox: sandbox_words(&program.path),
    };
    let approval = match session.capture_approval() {
        CaptureApproval::Operator => Approval {
            by: "operator policy (rea serve --approve-captures)".to_owned(),
            at: rfc3339(SystemTime::now()),
        },
        CaptureApproval::Person => match capture_approval::find(&proposal) {
            Found::Approved(person) => Approval {
                by: person.by,
                at: person.at,
            },
            Found::Changed => return Err(RunCaptureError::ProposalChanged),
            Found::Asking | Found::Nobody => return Err(RunCaptureError::NotApproved),
        },
    };
    let request = sandbox::Run {
        program: program.path.clone(),
        arguments: arguments.arguments,
        stdin,
        environment,
        bounds,
    };
    let mut outcome = sandbox::run(&tools, &request, &|| cancel.is_cancelled())?;
    if outcome.ended == Some(Ended::Cancelled) {
        return Err(RunCaptureError::Cancelled);
    }
    let program_path = program.path.to_string_lossy().into_owned();
    let trace = trace::parse_trace(&outcome.transcript, &program_path);
    outcome.settle_exit(trace.program_exit.clone());
    let fault = fault(session, &program, &trace);
    let ended_by = ended_by(&outcome, &trace);
    let document = capture_document(&program, &request, &approval, &outcome, &trace, ended_by);
    Ok(Retained {
        reply: RunCaptureResult {
            capture: document.clone(),
            ended_by,
            fault,
            stdout_head: String::from_utf8_lossy(&outcome.stdout.head).into_owned(),
            stderr_head: String::from_utf8_lossy(&outcome.stderr.head).into_owned(),
        },
        document,
        recorded_arguments: None,
    })
}

/// What approved a run.
struct Approval {
    by: String,
    at: String,
}

/// What the sandbox allows a run of `program`, in words (the person reads them; the capture
/// records them in `approval.scope`).
fn sandbox_words(program: &Path) -> String {
    format!(
        "bubblewrap: no network; no user namespaces; {} system calls refused (seccomp); a \
         read-only view of /usr, /etc, /lib and {}; an empty writable {WORK_DIR}, removed \
         afterwards; traced by strace",
        crate::capture::seccomp::REFUSED.len(),
        program
            .parent()
            .map_or_else(String::new, |parent| parent.to_string_lossy().into_owned()),
    )
}

fn environment(
    inherit: &[String],
    explicit: &Map<String, Value>,
) -> Result<BTreeMap<String, String>, RunCaptureError> {
    let mut environment = BTreeMap::new();
    for name in inherit {
        if !INHERITABLE.contains(&name.as_str()) {
            return Err(RunCaptureError::Environment {
                name: Quoted::new(name),
                reason: "not in the allowlist PATH, LANG, LC_ALL, LC_CTYPE, TERM, TZ",
            });
        }
        if let Ok(value) = std::env::var(name) {
            environment.insert(name.clone(), value);
        }
    }
    if explicit.len() > 64 {
        return Err(RunCaptureError::Environment {
            name: Quoted::new("environment"),
            reason: "more than 64 variables",
        });
    }
    for (name, value) in explicit {
        let valid_name = !name.is_empty()
            && name.len() <= 256
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid_name {
            return Err(RunCaptureError::Environment {
                name: Quoted::new(name),
                reason: "a name is letters, digits and _, not starting with a digit",
            });
        }
        let Some(value) = value.as_str().filter(|value| value.len() <= 4_096) else {
            return Err(RunCaptureError::Environment {
                name: Quoted::new(name),
                reason: "a value is a string of at most 4,096 bytes",
            });
        };
        environment.insert(name.clone(), value.to_owned());
    }
    if !environment.contains_key("PATH") {
        environment.insert("PATH".to_owned(), "/usr/bin:/bin".to_owned());
    }
    Ok(environment)
}

/// The program: an open document's file, or a path checked against the confinement.
fn resolve(session: &Session, program: &str) -> Result<Program, RunCaptureError> {
    let open = session.file_identity();
    let documents: Vec<String> = session
        .target(None, None)
        .ok()
        .and_then(|target| target.provider().list_documents().ok())
        .map(|documents| {
            documents
                .into_iter()
                .map(|document| document.name)
                .collect()
        })
        .unwrap_or_default();
    if let Some((origin, sha256)) = &open
        && documents.iter().any(|name| name == program)
    {
        check_executable(origin)?;
        return Ok(Program {
            path: origin.clone(),
            sha256: sha256.clone(),
            document: Some(program.to_owned()),
        });
    }
    let file = CheckedFile::open(
        Path::new(program),
        &session.confinement(),
        FileLimit::BINARY,
    )?;
    let path = file.real_path().unwrap_or_else(|| PathBuf::from(program));
    let bytes = file.read_all()?;
    let sha256 = hex(&sha2::Sha256::digest(&bytes));
    check_executable(&path)?;
    let document = match &open {
        Some((origin, open_sha)) if *origin == path && *open_sha == sha256 => {
            session.current_document()
        }
        _ => None,
    };
    Ok(Program {
        path,
        sha256,
        document,
    })
}

fn check_executable(path: &Path) -> Result<(), RunCaptureError> {
    use std::os::unix::fs::PermissionsExt;
    let executable = std::fs::metadata(path)
        .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0);
    if executable {
        Ok(())
    } else {
        Err(RunCaptureError::NotExecutable {
            path: Quoted::new(&path.to_string_lossy()),
        })
    }
}

/// Which bound ended the run: the one the watcher saw, else a limit the trace shows refused.
fn ended_by(outcome: &Outcome, trace: &Trace) -> Option<&'static str> {
    match outcome.ended {
        Some(ended) => Some(ended.bound()),
        None if trace.process_refused => Some("max_processes"),
        None if trace.memory_refused => Some("max_memory_mib"),
        None => None,
    }
}

/// The fault of the run, with the procedures of the open document on its stack.
fn fault(session: &Session, program: &Program, trace: &Trace) -> Option<FaultReport> {
    let fault = trace.fault.as_ref()?;
    let target = program
        .document
        .as_ref()
        .and_then(|document| session.target(None, Some(document)).ok());
    let program_path = program.path.to_string_lossy();
    let frames: Vec<FrameReport> = fault
        .frames
        .iter()
        .map(|frame| {
            let in_program = frame.module == program_path;
            FrameReport {
                module: frame.module.clone(),
                offset: format!("{:#x}", frame.offset),
                symbol: frame.symbol.clone(),
                procedure: target
                    .as_ref()
                    .filter(|_| in_program)
                    .and_then(|target| containing(target, frame.offset)),
            }
        })
        .collect();
    let procedure = frames
        .first()
        .filter(|frame| frame.module == program_path)
        .and_then(|frame| frame.procedure.clone());
    let callers = frames
        .iter()
        .skip(1)
        .filter_map(|frame| frame.procedure.clone())
        .collect();
    Some(FaultReport {
        signal: fault.signal.clone(),
        address: fault.address.map(|address| format!("{address:#x}")),
        instruction: fault
            .instruction
            .map(|instruction| format!("{instruction:#x}")),
        instruction_in_document: frames
            .first()
            .filter(|frame| frame.module == program_path)
            .map(|frame| frame.offset.clone()),
        procedure,
        callers,
        frames,
    })
}

/// Most procedure entries read to find the one holding an address.
const MAX_PROCEDURES_SCANNED: usize = 200_000;

/// The procedure of the target's document that holds `address`: the nearest start at or below
/// it, when its known size covers it (or its size is unknown).
fn containing(target: &Target, address: u64) -> Option<ProcedureRef> {
    let document = target.document().ok()?;
    let provider = target.provider();
    let mut cursor: Option<String> = None;
    let mut best: Option<(u64, Option<String>)> = None;
    let mut scanned = 0;
    loop {
        let page = provider
            .list_procedures(document, cursor.as_deref(), 1_000)
            .ok()?;
        for entry in &page.entries {
            let Ok(start) = Address::parse(&entry.address) else {
                continue;
            };
            let start = start.value();
            if start <= address && best.as_ref().is_none_or(|(found, _)| start > *found) {
                best = Some((start, entry.name.clone()));
            }
        }
        scanned += page.entries.len();
        match page.next_cursor {
            Some(next) if scanned < MAX_PROCEDURES_SCANNED && !page.entries.is_empty() => {
                cursor = Some(next);
            }
            _ => break,
        }
    }
    let (start, name) = best?;
    if let Ok(info) = provider.procedure_info(document, Address::new(start))
        && let Some(size) = info.size
        && address >= start.saturating_add(size)
    {
        return None;
    }
    Some(ProcedureRef {
        address: format!("{start:#x}"),
        name,
    })
}

fn capture_document(
    program: &Program,
    request: &sandbox::Run,
    approval: &Approval,
    outcome: &Outcome,
    trace: &Trace,
    ended_by: Option<&'static str>,
) -> Value {
    let program_path = program.path.to_string_lossy().into_owned();
    let mut argv = vec![program_path.clone()];
    argv.extend(request.arguments.iter().cloned());
    let mut subject = Map::new();
    subject.insert(
        "document".to_owned(),
        json!(
            program
                .document
                .clone()
                .unwrap_or_else(|| program_path.clone())
        ),
    );
    subject.insert("sha256".to_owned(), json!(program.sha256));
    let mut exit = Map::new();
    match &outcome.exit {
        Exit::Code(code) => exit.insert("code".to_owned(), json!(code)),
        Exit::Signal(signal) => exit.insert("signal".to_owned(), json!(signal)),
    };
    exit.insert(
        "timed_out".to_owned(),
        json!(outcome.ended == Some(Ended::WallTime)),
    );
    let bounds = request.bounds;
    let scope = bounded(&format!(
        "run {} with {} argument(s) once in the sandbox ({}), within \
         timeout_secs {}, max_output_bytes {}, max_memory_mib {}, max_processes {}",
        program_path,
        request.arguments.len(),
        sandbox_words(&program.path),
        bounds.wall_time.as_secs(),
        bounds.output_bytes,
        bounds.memory_mib,
        bounds.processes,
    ));
    let events = events(outcome, trace, ended_by);
    json!({
        "schema": CAPTURE_SCHEMA,
        "version": CAPTURE_VERSION,
        "subject": subject,
        "command": {"argv": argv, "cwd": WORK_DIR, "env": request.environment},
        "bounds": {
            "wall_time_ms": u64::try_from(bounds.wall_time.as_millis()).unwrap_or(u64::MAX),
            "output_bytes": bounds.output_bytes,
            "network": "none",
        },
        "approval": {"approved_by": approval.by, "approved_at": approval.at, "scope": scope},
        "exit": exit,
        "streams": {"stdout": stream(&outcome.stdout), "stderr": stream(&outcome.stderr)},
        "events": events,
    })
}

fn stream(capture: &StreamCapture) -> Value {
    json!({"sha256": capture.sha256, "bytes": capture.bytes, "truncated": capture.truncated})
}

/// The trace's events, then the streams (with their heads), the fault's stack and the bound
/// that ended the run as notes; `seq` from 0, `t_ms` never decreasing.
fn events(outcome: &Outcome, trace: &Trace, ended_by: Option<&'static str>) -> Vec<Value> {
    let mut events: Vec<Map<String, Value>> = trace.events.clone();
    let end = u64::try_from(outcome.elapsed.as_millis())
        .unwrap_or(u64::MAX)
        .min(86_400_000);
    let mut add = |kind: &str, fields: Value| {
        let mut event = Map::new();
        event.insert("t_ms".to_owned(), json!(end));
        event.insert("kind".to_owned(), json!(kind));
        if let Value::Object(fields) = fields {
            event.extend(fields);
        }
        events.push(event);
    };
    for (kind, capture) in [("stdout", &outcome.stdout), ("stderr", &outcome.stderr)] {
        if capture.bytes > 0 {
            let head = String::from_utf8_lossy(&capture.head);
            add(
                kind,
                json!({"offset": 0, "bytes": capture.head.len(), "text": bounded(&head)}),
            );
        }
    }
    if let Some(fault) = &trace.fault {
        let stack: Vec<String> = fault
            .frames
            .iter()
            .map(|frame| {
                format!(
                    "{}({}) [{:#x}]",
                    frame.module,
                    frame.symbol.as_deref().unwrap_or(""),
                    frame.offset
                )
            })
            .collect();
        add(
            "note",
            json!({"text": bounded(&format!(
                "{} at instruction {}: {}",
                fault.signal,
                fault.instruction.map_or_else(|| "unknown".to_owned(), |ip| format!("{ip:#x}")),
                if stack.is_empty() { "no stack".to_owned() } else { stack.join(" < ") },
            ))}),
        );
    }
    if trace.events_left_out > 0 {
        add(
            "note",
            json!({"text": format!("{} later events were left out", trace.events_left_out)}),
        );
    }
    if let Some(bound) = ended_by {
        add(
            "note",
            json!({"text": format!("the bound {bound} ended the run")}),
        );
    }
    let mut last = 0u64;
    events
        .into_iter()
        .enumerate()
        .map(|(seq, mut event)| {
            let t_ms = event
                .get("t_ms")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .max(last);
            last = t_ms;
            event.insert("t_ms".to_owned(), json!(t_ms));
            event.insert("seq".to_owned(), json!(seq));
            Value::Object(event)
        })
        .collect()
}

/// Text cut to 4,096 characters and never empty (the schema's bounds for text fields).
fn bounded(text: &str) -> String {
    let mut out: String = text.chars().take(4_000).collect();
    if text.chars().nth(4_000).is_some() {
        out.push('…');
    }
    if out.is_empty() {
        out.push('-');
    }
    out
}

/// A procedure of the open document.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub(super) struct ProcedureRef {
    /// Its start address.
    address: String,
    /// Its name, when known.
    name: Option<String>,
}

/// One frame of the faulting stack.
#[derive(Serialize, JsonSchema)]
pub(super) struct FrameReport {
    /// The module (executable or library) path.
    module: String,
    /// The address within the module (for the program: its link-time address).
    offset: String,
    /// The tracer's symbol and offset, when it knew one.
    symbol: Option<String>,
    /// The procedure of the open document holding it, when the module is the open document.
    procedure: Option<ProcedureRef>,
}

/// A fatal signal's fault.
#[derive(Serialize, JsonSchema)]
pub(super) struct FaultReport {
    /// SIGSEGV, SIGBUS, SIGILL or SIGFPE.
    signal: String,
    /// The faulting address (si_addr).
    address: Option<String>,
    /// The instruction pointer at delivery (in the running process).
    instruction: Option<String>,
    /// The instruction's address in the document (load bias removed), when it is in the
    /// program.
    instruction_in_document: Option<String>,
    /// The procedure holding the instruction.
    procedure: Option<ProcedureRef>,
    /// The procedures of the open document on the stack below it, innermost first.
    callers: Vec<ProcedureRef>,
    /// The stack, innermost first.
    frames: Vec<FrameReport>,
}

/// The result of `run_process_capture`.
#[derive(Serialize, JsonSchema)]
pub(super) struct RunCaptureResult {
    /// The Process Capture v4 document, as retained.
    #[schemars(with = "serde_json::Map<String, Value>")]
    capture: Value,
    /// The bound that ended the run (timeout_secs, max_output_bytes, max_processes,
    /// max_memory_mib), or null.
    ended_by: Option<&'static str>,
    /// The fault, for SIGSEGV, SIGBUS, SIGILL and SIGFPE; else null.
    fault: Option<FaultReport>,
    /// The first 4,096 bytes of standard output (lossy UTF-8).
    stdout_head: String,
    /// The first 4,096 bytes of standard error (lossy UTF-8).
    stderr_head: String,
}
