//! Capture and reconstruction tools: `import_process_capture` retains a capture document made
//! elsewhere as Evidence (the person runs the approved experiment and imports what it
//! recorded; `run_process_capture`, in `run_capture.rs`, makes one here), and
//! `verify_reconstruction` evaluates claims against retained Evidence only.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::definition::ToolAnnotations;
use super::outcome::ToolError;
use super::spec::{Handler, Retained, ToolSpec};
use crate::capture::{CAPTURE_VERSION, CaptureValidity, classify_capture};
use crate::claims::{EvidenceRecordView, MAX_CLAIMS, Verdict, evaluate, parse_claims};
use crate::session::{Cancel, Session};

/// The arguments of `import_process_capture`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct ImportCaptureArguments {
    /// The capture document, a JSON object with `schema: "rea.process-capture"` and
    /// `version: 4`.
    capture: Map<String, Value>,
}

/// The arguments of `verify_reconstruction`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct VerifyArguments {
    /// Claim objects, each with a `kind` and that kind's fields, e.g. `{"kind": "bytes_equal",
    /// "document": "app", "address": "0x1000", "hex": "5548"}`.
    #[schemars(length(max = MAX_CLAIMS))]
    claims: Vec<Value>,
}

/// The capture and reconstruction tools, in catalog order.
pub(super) fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "import_process_capture",
            title: "Import Process Capture",
            description: "Retain a Process Capture v4 document (subject, command, bounds, \
            approval, exit, stream digests, events) made elsewhere as Evidence: the person runs \
            the approved experiment and imports its capture (run_process_capture runs one \
            here). The capture is always retained; the result says whether it is a valid v4 capture, which \
            only then is offered as a Process capture and read by verify_reconstruction. The \
            capture is stored once, as the Evidence record's result (its recorded `capture` \
            argument says so); at most 64 levels deep and 256 KiB.",
            annotations: ToolAnnotations {
                read_only_hint: false,
                destructive_hint: false,
                idempotent_hint: false,
                open_world_hint: false,
            },
            handler: Handler::retain(import_process_capture),
        },
        ToolSpec {
            name: "verify_reconstruction",
            title: "Verify Reconstruction",
            description: "Evaluate a list of claims (at most 100) against retained Evidence only: \
            procedure_exists, procedure_named, bytes_equal, occurrence_digest, \
            occurrence_format, capture_exit_code, capture_stdout_digest, \
            capture_stderr_digest, calls (procedure `caller` calls `callee` directly, each an \
            address or a name; checked against retained callees and disassemble Evidence). \
            Each claim comes back supported, contradicted or \
            unverified, citing the Evidence IDs it rests on. Nothing is observed or recorded.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::read(verify_reconstruction),
        },
    ]
}

/// Stands for the capture among the recorded arguments: the document is stored once, as the
/// record's result.
pub(crate) const CAPTURE_ARGUMENT_MARKER: &str = "(retained as this record's result)";

fn import_process_capture(
    _session: &Session,
    arguments: ImportCaptureArguments,
    _cancel: &Cancel,
) -> Result<Retained<ImportCaptureResult>, ToolError> {
    let document = Value::Object(arguments.capture);
    let (valid, validity, problem) = match classify_capture(&document) {
        CaptureValidity::ValidV4 => (true, "valid_v4", None),
        CaptureValidity::OtherVersion(version) => (
            false,
            "other_version",
            Some(format!(
                "version {version} is retained but only version {CAPTURE_VERSION} is validated"
            )),
        ),
        CaptureValidity::Invalid(invalid) => (false, "invalid", Some(invalid.to_string())),
    };
    Ok(Retained {
        reply: ImportCaptureResult {
            problem,
            valid,
            validity,
        },
        document,
        recorded_arguments: Some(
            [("capture".to_owned(), Value::from(CAPTURE_ARGUMENT_MARKER))]
                .into_iter()
                .collect(),
        ),
    })
}

/// The result of `import_process_capture`.
#[derive(Serialize, JsonSchema)]
pub(super) struct ImportCaptureResult {
    /// Why it is not a valid v4 capture; null when valid.
    problem: Option<String>,
    /// Whether the capture is a valid Process Capture v4 (a Process capture completion
    /// candidate).
    valid: bool,
    /// What the document is.
    #[schemars(extend("enum" = ["valid_v4", "other_version", "invalid"]))]
    validity: &'static str,
}

fn verify_reconstruction(
    session: &Session,
    arguments: VerifyArguments,
) -> Result<VerifyResult, ToolError> {
    let claims = parse_claims(&Value::Array(arguments.claims))?;
    let records = session.evidence_records();
    let views: Vec<EvidenceRecordView<'_>> = records
        .iter()
        .map(|record| EvidenceRecordView {
            id: record.id.as_str(),
            operation: &record.operation,
            arguments: &record.arguments,
            result: &record.result,
            provider: record.provider.as_deref(),
        })
        .collect();
    Ok(VerifyResult {
        verdicts: evaluate(&claims, &views),
    })
}

/// The result of `verify_reconstruction`.
#[derive(Serialize, JsonSchema)]
pub(super) struct VerifyResult {
    /// One verdict per claim, in claim order.
    verdicts: Vec<Verdict>,
}
