//! Process Capture v4 (docs/CONTRACT.md section 10): the record of one approved run of a command
//! against an artifact, either made by a person outside REA and imported with
//! `import_process_capture`, or made by `run_process_capture` in the [`sandbox`] after the
//! person (or the operator's policy) approved it, with its events read from the tracer's
//! transcript by [`trace`].
//!
//! The published schema is `src/schemas/process-capture-v4.schema.json`: `schema`
//! (`"rea.process-capture"`), `version` (4), `subject` (an artifact occurrence and/or a
//! document), `command` (argv, cwd, the allow-listed environment), `bounds` (wall time, output
//! bytes, network), `approval` (by whom, when, for what), `exit` (exactly one of code and
//! signal, and whether the wall-time bound ended the run), `streams` (SHA-256 and byte counts of
//! stdout and stderr) and `events` (ordered by `seq`, each of a declared `kind`).
//!
//! ```
//! use rea::capture::{CaptureValidity, classify_capture};
//! use serde_json::json;
//!
//! let older = json!({"schema": "rea.process-capture", "version": 3});
//! assert_eq!(classify_capture(&older), CaptureValidity::OtherVersion(3.into()));
//! let CaptureValidity::Invalid(invalid) =
//!     classify_capture(&json!({"schema": "rea.process-capture", "version": 4}))
//! else {
//!     unreachable!()
//! };
//! assert_eq!(invalid.violation.pointer, ""); // `subject` and the rest are missing
//! ```
//!
//! [`classify_capture`] sorts any JSON value into [`CaptureValidity`]. Every imported document
//! is retained as Evidence whatever its class; only [`CaptureValidity::ValidV4`] documents
//! retained by [`CAPTURE_OPERATION`] or [`RUN_OPERATION`] are Process capture completion candidates
//! ([`is_capture_candidate`]).

pub mod sandbox;
pub mod seccomp;
pub mod trace;

use serde_json::{Number, Value};

use crate::schemas::{PROCESS_CAPTURE, SchemaViolation};

/// The `schema` field of every capture.
pub const CAPTURE_SCHEMA: &str = "rea.process-capture";

/// The capture version this server validates.
pub const CAPTURE_VERSION: u64 = 4;

/// The tool (Evidence operation) that retains captures; its Evidence result is the capture
/// document exactly as imported.
pub const CAPTURE_OPERATION: &str = "import_process_capture";

/// The tool (Evidence operation) that runs a program in the sandbox and retains its capture;
/// its Evidence result is the capture document.
pub const RUN_OPERATION: &str = "run_process_capture";

/// Who approves a `run_process_capture` run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CaptureApproval {
    /// The person, asked through the client (MCP elicitation: `elicitation/create` in the 2025
    /// era, an `input_required` result in 2026); a client that cannot ask gets an error and
    /// nothing runs.
    #[default]
    Person,
    /// The operator, for every run, by starting the server with `--approve-captures` (recorded
    /// in each capture as policy approval).
    Operator,
}

/// Most bytes of a run's standard input.
pub const MAX_STDIN_BYTES: usize = 64 << 10;

/// Why a run was refused or failed; nothing was committed.
#[derive(Debug, thiserror::Error)]
pub enum RunCaptureError {
    /// No approval could be had: the client cannot ask its person (it did not declare MCP
    /// elicitation) and the operator's policy does not approve.
    #[error(
        "run_process_capture runs nothing without approval: the person's, asked through MCP \
         elicitation (the client must declare the elicitation capability), or the operator's \
         policy (start rea serve with --approve-captures); nothing was run"
    )]
    NotApproved,
    /// The person declined or cancelled the elicitation (`answer`: `decline`, `cancel`, or an
    /// accept that unticked `run`).
    #[error(
        "the person did not approve the run (the elicitation was answered {answer}); nothing was run"
    )]
    Declined {
        /// How the elicitation was answered.
        answer: &'static str,
    },
    /// No answer to the elicitation: it timed out, the client refused it, the request was
    /// cancelled or the answer was not an elicitation result.
    #[error("the approval was not given: {reason}; nothing was run")]
    Unanswered {
        /// Why, in words.
        reason: String,
    },
    /// The run differs from the one the person approved (the program's bytes, its arguments,
    /// input, environment or bounds changed since).
    #[error(
        "this run is not the one the person approved (the program's bytes, arguments, input, \
         environment or bounds differ); nothing was run: call it again to ask again"
    )]
    ProposalChanged,
    /// The sandbox is not available or the run failed.
    #[error(transparent)]
    Sandbox(#[from] sandbox::SandboxError),
    /// The program is not an executable regular file.
    #[error("the program {path:?} is not executable; nothing was run")]
    NotExecutable {
        /// The path.
        path: crate::text::Quoted,
    },
    /// An environment variable that may not be inherited, or a value that is not a string.
    #[error("environment {name:?}: {reason}; nothing was run")]
    Environment {
        /// The variable.
        name: crate::text::Quoted,
        /// Why.
        reason: &'static str,
    },
    /// The standard input is too long.
    #[error("stdin is {bytes} bytes, over the limit of {MAX_STDIN_BYTES}; nothing was run")]
    Stdin {
        /// Its length.
        bytes: usize,
    },
    /// The program file could not be opened under the roots.
    #[error(transparent)]
    File(#[from] crate::base::files::FileError),
    /// The call was cancelled; the run was stopped and nothing kept.
    #[error("run_process_capture was cancelled; the run was stopped and nothing was kept")]
    Cancelled,
}

/// What a document is, as far as captures go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaptureValidity {
    /// A valid Process Capture v4: a completion candidate.
    ValidV4,
    /// A `rea.process-capture` document of another version (the number found); retained, not
    /// validated, not a candidate.
    OtherVersion(Number),
    /// Not a valid capture: retained, not a candidate.
    Invalid(InvalidCapture),
}

/// Why a document is not a valid Process Capture v4.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a valid Process Capture v4: {violation}")]
pub struct InvalidCapture {
    /// Where and why.
    pub violation: SchemaViolation,
}

/// Classifies any JSON value. Total: never fails, never panics.
///
/// A document whose `schema` is `"rea.process-capture"` and whose `version` is a number other
/// than 4 is [`CaptureValidity::OtherVersion`]. Everything else is checked against the v4 schema
/// and then for event order (`seq` strictly increasing, `t_ms` never decreasing).
pub fn classify_capture(document: &Value) -> CaptureValidity {
    if document.get("schema").and_then(Value::as_str) == Some(CAPTURE_SCHEMA)
        && let Some(Value::Number(version)) = document.get("version")
        && version.as_f64() != Some(4.0)
    {
        return CaptureValidity::OtherVersion(version.clone());
    }
    if let Err(violation) = PROCESS_CAPTURE.check(document) {
        return CaptureValidity::Invalid(InvalidCapture { violation });
    }
    match check_event_order(document) {
        Ok(()) => CaptureValidity::ValidV4,
        Err(violation) => CaptureValidity::Invalid(InvalidCapture { violation }),
    }
}

/// Whether an Evidence record (its operation and result) is a Process capture completion
/// candidate.
pub fn is_capture_candidate(operation: &str, result: &Value) -> bool {
    (operation == CAPTURE_OPERATION || operation == RUN_OPERATION)
        && classify_capture(result) == CaptureValidity::ValidV4
}

fn check_event_order(document: &Value) -> Result<(), SchemaViolation> {
    let events = document
        .get("events")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    for (index, pair) in events.windows(2).enumerate() {
        let field = |event: &Value, name: &str| event.get(name).and_then(integer);
        let at = index + 1;
        if field(&pair[1], "seq") <= field(&pair[0], "seq") {
            return Err(SchemaViolation::new(
                format!("/events/{at}/seq"),
                "seq must be greater than the previous event's",
            ));
        }
        if field(&pair[1], "t_ms") < field(&pair[0], "t_ms") {
            return Err(SchemaViolation::new(
                format!("/events/{at}/t_ms"),
                "t_ms must not be less than the previous event's",
            ));
        }
    }
    Ok(())
}

/// A JSON integer (JSON Schema counts `4.0` as one) as `i64`, if it fits.
pub(crate) fn integer(value: &Value) -> Option<i64> {
    let number = value.as_number()?;
    if let Some(integer) = number.as_i64() {
        return Some(integer);
    }
    let float = number.as_f64()?;
    let in_range = (-9.2e18..=9.2e18).contains(&float);
    // Truncation is exact: the fraction is zero and the value is in range.
    #[allow(clippy::cast_possible_truncation)]
    (float.fract() == 0.0 && in_range).then_some(float as i64)
}

/// Which output stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl Stream {
    fn field(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

/// How the captured process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureExit<'a> {
    /// It exited with this code.
    Code(i64),
    /// A signal ended it (e.g. `SIGKILL`).
    Signal(&'a str),
}

/// The recorded digest of one output stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamDigest<'a> {
    /// SHA-256 of what was captured, lowercase hexadecimal.
    pub sha256: &'a str,
    /// Bytes captured.
    pub bytes: u64,
    /// Whether output past `bounds.output_bytes` was dropped (the digest covers what was kept).
    pub truncated: bool,
}

/// A document known to be a valid Process Capture v4, with typed access to what claims read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValidCapture<'a> {
    document: &'a Value,
}

impl<'a> ValidCapture<'a> {
    /// `Some` exactly when [`classify_capture`] says [`CaptureValidity::ValidV4`].
    pub fn new(document: &'a Value) -> Option<ValidCapture<'a>> {
        (classify_capture(document) == CaptureValidity::ValidV4)
            .then_some(ValidCapture { document })
    }

    /// The document.
    pub fn document(&self) -> &'a Value {
        self.document
    }

    /// How the process ended.
    pub fn exit(&self) -> Option<CaptureExit<'a>> {
        let exit = self.document.get("exit")?;
        if let Some(code) = exit.get("code").and_then(integer) {
            return Some(CaptureExit::Code(code));
        }
        exit.get("signal")
            .and_then(Value::as_str)
            .map(CaptureExit::Signal)
    }

    /// Whether the wall-time bound ended the run.
    pub fn timed_out(&self) -> bool {
        self.document
            .pointer("/exit/timed_out")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// The recorded digest of `stream`.
    pub fn stream(&self, stream: Stream) -> Option<StreamDigest<'a>> {
        let digest = self.document.get("streams")?.get(stream.field())?;
        Some(StreamDigest {
            sha256: digest.get("sha256")?.as_str()?,
            bytes: digest
                .get("bytes")
                .and_then(integer)
                .and_then(|bytes| u64::try_from(bytes).ok())?,
            truncated: digest.get("truncated")?.as_bool()?,
        })
    }

    /// The artifact occurrence that was run, if the subject names one.
    pub fn subject_occurrence(&self) -> Option<&'a str> {
        self.document
            .pointer("/subject/occurrence_id")
            .and_then(Value::as_str)
    }

    /// The document that was run, if the subject names one.
    pub fn subject_document(&self) -> Option<&'a str> {
        self.document
            .pointer("/subject/document")
            .and_then(Value::as_str)
    }
}
