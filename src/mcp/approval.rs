//! The person's approval of a `run_process_capture` run, asked through MCP elicitation
//! (docs/CONTRACT.md section 10).
//!
//! The tool first runs up to its approval point ([`crate::tools::capture_approval::propose`]):
//! its arguments, program and sandbox are checked and nothing has started. Then the person is
//! shown the [`Proposal`]:
//!
//! - a 2025 client (2025-06-18 or later) that declared `elicitation` (form mode) is sent
//!   `elicitation/create` on the request's stream and answers it before the call goes on;
//! - a 2026 request whose `_meta` declares `elicitation` is answered `input_required` with
//!   one input request, [`APPROVAL_KEY`], and a sealed `requestState` naming the proposal's
//!   digest; the retry carries the person's answer in `inputResponses`;
//! - any other client is answered a tool error (unless the operator's policy approves, which
//!   the shell checks before it comes here).
//!
//! Only `accept` runs the program (an accept that unticks [`RUN_FIELD`] does not); decline,
//! cancel, no answer within [`ASK_TIMEOUT`](super::handler_error::ASK_TIMEOUT), a cancelled
//! request and a proposal that changed since are tool errors, and nothing runs or is committed.

use serde_json::{Map, Value, json};

use super::era::CLIENT_CAPABILITIES_KEY;
use super::error::RequestError;
use super::protocol::ProtocolVersion;
use super::sealed::{self, StateError};
use super::state::RequestContext;
use crate::capture::{RUN_OPERATION, RunCaptureError};
use crate::tools::capture_approval::{PersonApproval, Proposal};
use crate::tools::{ToolError, ToolOutcome};

/// The key of the approval among a 2026 result's `inputRequests` and its retry's
/// `inputResponses`.
pub(crate) const APPROVAL_KEY: &str = "approval";

/// The form's one field: a boolean, ticked by default; an accept with it unticked declines.
pub(crate) const RUN_FIELD: &str = "run";

/// How asking ended.
#[derive(Debug)]
pub(crate) enum Asked {
    /// The person accepted: run with this approval.
    Granted(PersonApproval),
    /// The call's answer: a 2026 `input_required` result, or a tool error (nothing ran).
    Answered(Value),
}

/// The `elicitation/create` parameters that show `proposal`; `mode` is named for the
/// versions that have it (2025-11-25 and 2026-07-28).
pub(crate) fn elicitation(proposal: &Proposal, with_mode: bool) -> Value {
    let mut params = json!({
        "message": proposal.message(),
        "requestedSchema": {
            "type": "object",
            "properties": {
                RUN_FIELD: {
                    "type": "boolean",
                    "title": "Run it once",
                    "description": "Run this program once in rea's capture sandbox, within \
                                    these bounds",
                    "default": true,
                },
            },
        },
    });
    if with_mode {
        params["mode"] = json!("form");
    }
    params
}

/// Whether the client capabilities `capabilities` allow a form elicitation: an `elicitation`
/// object that names no mode (form, as 2025-06-18 has it) or names `form`.
pub(crate) fn declares_form(capabilities: &Value) -> bool {
    match capabilities.get("elicitation") {
        Some(Value::Object(modes)) => {
            modes.get("form").is_some_and(Value::is_object)
                || !(modes.contains_key("form") || modes.contains_key("url"))
        }
        _ => false,
    }
}

/// What the person's answer (an `ElicitResult`) decides.
pub(crate) fn decide(answer: &Value) -> Result<(), RunCaptureError> {
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => match answer.get("content").and_then(|c| c.get(RUN_FIELD)) {
            Some(Value::Bool(false)) => Err(RunCaptureError::Declined {
                answer: "accept with run unticked",
            }),
            _ => Ok(()),
        },
        Some("decline") => Err(RunCaptureError::Declined { answer: "decline" }),
        Some("cancel") => Err(RunCaptureError::Declined { answer: "cancel" }),
        _ => Err(RunCaptureError::Unanswered {
            reason: "the client's answer is not an elicitation result (its action must be \
                     accept, decline or cancel)"
                .to_owned(),
        }),
    }
}

/// The tool error a refused approval answers.
pub(crate) fn refusal(error: RunCaptureError) -> Value {
    ToolOutcome::failure(&ToolError::from(error)).to_value()
}

/// Asks the person of the request `context` (with its `params`) to approve `proposal`.
pub(crate) async fn ask(
    context: &RequestContext,
    params: &Map<String, Value>,
    proposal: Proposal,
) -> Result<Asked, RequestError> {
    if context.modern.is_some() {
        return ask_modern(context, params, proposal);
    }
    let connection = &context.connection;
    let version = connection.version();
    let can_ask = version.is_some_and(|v| v >= ProtocolVersion::V2025_06_18)
        && declares_form(&connection.client_capabilities());
    if !can_ask {
        return Ok(Asked::Answered(refusal(RunCaptureError::NotApproved)));
    }
    let with_mode = version.is_some_and(|v| v >= ProtocolVersion::V2025_11_25);
    let asked = context
        .ask("elicitation/create", elicitation(&proposal, with_mode))
        .await;
    Ok(match asked {
        Ok(answer) => granted_or_refused(&answer, &proposal, "2025 elicitation/create"),
        Err(error) => Asked::Answered(refusal(RunCaptureError::Unanswered {
            reason: error.to_string(),
        })),
    })
}

/// The 2026 round: `input_required` first, then the retry's answer.
fn ask_modern(
    context: &RequestContext,
    params: &Map<String, Value>,
    proposal: Proposal,
) -> Result<Asked, RequestError> {
    let digest = proposal.digest();
    match params.get("inputResponses") {
        None | Some(Value::Null) => {}
        Some(Value::Object(responses)) => {
            let sealed = match params.get("requestState") {
                Some(Value::String(sealed)) => sealed,
                _ => {
                    return Err(RequestError::RequestState {
                        reason: StateError::Malformed,
                    });
                }
            };
            let state = sealed::open(sealed, "tools/call", RUN_OPERATION)
                .map_err(|reason| RequestError::RequestState { reason })?;
            if state.get("proposal").and_then(Value::as_str) != Some(digest.as_str()) {
                return Ok(Asked::Answered(refusal(RunCaptureError::ProposalChanged)));
            }
            let Some(answer) = responses.get(APPROVAL_KEY) else {
                return Ok(Asked::Answered(refusal(RunCaptureError::Unanswered {
                    reason: format!("inputResponses has no {APPROVAL_KEY:?}"),
                })));
            };
            return Ok(granted_or_refused(
                answer,
                &proposal,
                "2026 input_required elicitation",
            ));
        }
        Some(_) => {
            return Err(RequestError::NotAnObjectField {
                path: "params",
                field: "inputResponses",
            });
        }
    }
    let capabilities = params
        .get("_meta")
        .and_then(|meta| meta.get(CLIENT_CAPABILITIES_KEY))
        .cloned()
        .unwrap_or_else(|| json!({}));
    if !declares_form(&capabilities) {
        return Ok(Asked::Answered(refusal(RunCaptureError::NotApproved)));
    }
    let sealed = sealed::seal("tools/call", RUN_OPERATION, &json!({ "proposal": digest }))
        .ok_or(RequestError::NoRandom)?;
    context
        .input_required
        .store(true, std::sync::atomic::Ordering::Release);
    Ok(Asked::Answered(json!({
        "inputRequests": {
            APPROVAL_KEY: {
                "method": "elicitation/create",
                "params": elicitation(&proposal, true),
            },
        },
        "requestState": sealed,
    })))
}

fn granted_or_refused(answer: &Value, proposal: &Proposal, how: &str) -> Asked {
    match decide(answer) {
        Ok(()) => Asked::Granted(PersonApproval::of(
            proposal,
            format!("the person, asked through MCP ({how})"),
        )),
        Err(error) => Asked::Answered(refusal(error)),
    }
}
