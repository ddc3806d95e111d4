//! Evaluating claims against retained Evidence (rules in the module documentation of
//! [`super`]).

use std::cell::OnceCell;

use super::sightings::{
    ByteSighting, CallTarget, CallView, OccurrenceSighting, ProcedureSighting, byte_sightings,
    call_views, complete_listing, occurrence_sightings, procedure_sightings,
};
use super::{Claim, EvidenceRecordView, ProcedureRef, Verdict, VerdictStatus};
use crate::capture::{CAPTURE_OPERATION, CaptureExit, RUN_OPERATION, Stream, ValidCapture};
use crate::inventory::ExecutableFormat;
use crate::text::Quoted;

/// Evaluates each claim against `evidence` (the retained records, in ledger order) and nothing
/// else; one verdict per claim, in claim order.
pub fn evaluate(claims: &[Claim], evidence: &[EvidenceRecordView<'_>]) -> Vec<Verdict> {
    let context = Context {
        evidence,
        procedures: OnceCell::new(),
        bytes: OnceCell::new(),
        occurrences: OnceCell::new(),
        calls: OnceCell::new(),
    };
    claims
        .iter()
        .enumerate()
        .map(|(index, claim)| {
            let Finding {
                status,
                evidence,
                reason,
            } = context.finding(claim);
            Verdict {
                index,
                kind: claim.kind(),
                status,
                evidence,
                reason,
            }
        })
        .collect()
}

/// A verdict before it is numbered.
struct Finding {
    status: VerdictStatus,
    evidence: Vec<String>,
    reason: String,
}

impl Finding {
    fn new<'a>(
        status: VerdictStatus,
        evidence: impl IntoIterator<Item = &'a str>,
        reason: String,
    ) -> Finding {
        let mut cited: Vec<String> = Vec::new();
        for id in evidence {
            // Sightings come in ledger order, so a repeated ID is the same record again.
            if cited.last().map(String::as_str) != Some(id) && !cited.iter().any(|c| c == id) {
                cited.push(id.to_owned());
            }
        }
        Finding {
            status,
            evidence: cited,
            reason,
        }
    }

    fn unverified(reason: String) -> Finding {
        Finding::new(VerdictStatus::Unverified, [], reason)
    }
}

/// The records, with what they show read once on first need.
struct Context<'a, 'e> {
    evidence: &'e [EvidenceRecordView<'a>],
    procedures: OnceCell<Vec<ProcedureSighting<'a>>>,
    bytes: OnceCell<Vec<ByteSighting<'a>>>,
    occurrences: OnceCell<Vec<OccurrenceSighting<'a>>>,
    calls: OnceCell<Vec<CallView<'a>>>,
}

impl<'a> Context<'a, '_> {
    fn finding(&self, claim: &Claim) -> Finding {
        match claim {
            Claim::ProcedureExists { document, address } => {
                self.procedure_exists(document, *address)
            }
            Claim::ProcedureNamed {
                document,
                address,
                name,
            } => self.procedure_named(document, *address, name),
            Claim::BytesEqual {
                document,
                address,
                bytes,
            } => self.bytes_equal(document, *address, bytes),
            Claim::OccurrenceDigest {
                occurrence_id,
                sha256,
            } => self.occurrence(occurrence_id, "digest", |sighting| {
                (sighting.sha256 == *sha256, sighting.sha256.clone())
            }),
            Claim::OccurrenceFormat {
                occurrence_id,
                format,
            } => self.occurrence(occurrence_id, "format", |sighting| {
                (
                    sighting.format == Some(*format),
                    format_name(sighting.format),
                )
            }),
            Claim::CaptureExitCode { capture, code } => self.capture_exit_code(capture, *code),
            Claim::CaptureStdoutDigest { capture, sha256 } => {
                self.capture_digest(capture, Stream::Stdout, sha256)
            }
            Claim::CaptureStderrDigest { capture, sha256 } => {
                self.capture_digest(capture, Stream::Stderr, sha256)
            }
            Claim::Calls {
                document,
                caller,
                callee,
            } => self.calls(document.as_deref(), caller, callee),
        }
    }

    fn calls(
        &self,
        document: Option<&str>,
        caller: &ProcedureRef,
        callee: &ProcedureRef,
    ) -> Finding {
        let views: Vec<&CallView<'a>> = self
            .calls
            .get_or_init(|| call_views(self.evidence))
            .iter()
            .filter(|view| document.is_none_or(|document| view.document == document))
            .filter(|view| match caller {
                ProcedureRef::Address(address) => view.caller_address == *address,
                ProcedureRef::Name(name) => view.caller_name == Some(name.as_str()),
            })
            .collect();
        let is_callee = |call: &CallTarget<'_>| match callee {
            ProcedureRef::Address(address) => call.address == Some(*address),
            ProcedureRef::Name(name) => call.names.contains(&name.as_str()),
        };
        // A call that may be to the callee without showing it: unnamed, when asked by name.
        let undecided = |call: &CallTarget<'_>| match callee {
            ProcedureRef::Address(_) => call.address.is_none(),
            ProcedureRef::Name(_) => call.names.is_empty(),
        };
        let in_document = match document {
            Some(document) => format!(" in {:?}", Quoted::new(document)),
            None => String::new(),
        };
        let complete: Vec<_> = views.iter().filter(|view| view.complete).collect();
        let ruling_out: Vec<_> = complete
            .iter()
            .filter(|view| {
                !view
                    .calls
                    .iter()
                    .any(|call| is_callee(call) || undecided(call))
            })
            .collect();
        if let Some(first) = ruling_out.first() {
            return Finding::new(
                VerdictStatus::Contradicted,
                ruling_out.iter().map(|view| view.evidence),
                format!(
                    "a complete {} view of {caller}{in_document} ({} direct calls) has no call to {callee}",
                    first.operation,
                    first.calls.len()
                ),
            );
        }
        let supporting: Vec<_> = views
            .iter()
            .filter(|view| view.calls.iter().any(is_callee))
            .collect();
        if !supporting.is_empty() {
            return Finding::new(
                VerdictStatus::Supported,
                supporting.iter().map(|view| view.evidence),
                format!(
                    "retained Evidence shows a direct call from {caller} to {callee}{in_document}"
                ),
            );
        }
        if let Some(first) = complete.first() {
            let unnamed = first.calls.iter().filter(|call| undecided(call)).count();
            return Finding::new(
                VerdictStatus::Unverified,
                complete.iter().map(|view| view.evidence),
                format!(
                    "a complete {} view of {caller}{in_document} has {unnamed} direct calls to callees without a name, so it neither shows nor rules out {callee}",
                    first.operation
                ),
            );
        }
        if views.is_empty() {
            return Finding::unverified(format!(
                "no retained callees or disassemble Evidence shows the calls of {caller}{in_document}"
            ));
        }
        Finding::new(
            VerdictStatus::Unverified,
            views.iter().map(|view| view.evidence),
            format!(
                "retained Evidence shows calls of {caller}{in_document} but not to {callee}, and none is a complete view (a first and last page of a complete analysis)"
            ),
        )
    }

    fn procedures_at(&self, document: &str, address: u64) -> Vec<&ProcedureSighting<'a>> {
        self.procedures
            .get_or_init(|| procedure_sightings(self.evidence))
            .iter()
            .filter(|sighting| sighting.document == document && sighting.address == address)
            .collect()
    }

    /// The verdict when no record shows the procedure: contradicted by a complete listing,
    /// else unverified.
    fn procedure_absent(&self, document: &str, address: u64) -> Finding {
        let quoted_document = Quoted::new(document);
        match complete_listing(self.evidence, document) {
            Some(listing) if !listing.addresses.contains(&address) => Finding::new(
                VerdictStatus::Contradicted,
                listing.evidence.iter().copied(),
                format!(
                    "a complete list_procedures listing of {quoted_document:?} ({} pages) has no procedure at {address:#x}",
                    listing.evidence.len()
                ),
            ),
            _ => Finding::unverified(format!(
                "no retained Evidence shows a procedure at {address:#x} in {quoted_document:?}"
            )),
        }
    }

    fn procedure_exists(&self, document: &str, address: u64) -> Finding {
        let quoted_document = Quoted::new(document);
        let seen = self.procedures_at(document, address);
        if seen.is_empty() {
            return self.procedure_absent(document, address);
        }
        Finding::new(
            VerdictStatus::Supported,
            seen.iter().map(|sighting| sighting.evidence),
            format!("retained Evidence shows a procedure at {address:#x} in {quoted_document:?}"),
        )
    }

    fn procedure_named(&self, document: &str, address: u64, name: &str) -> Finding {
        let quoted_document = Quoted::new(document);
        let quoted_name = Quoted::new(name);
        let seen = self.procedures_at(document, address);
        let contradicting: Vec<_> = seen
            .iter()
            .filter(|s| s.names_complete && !s.names.is_empty() && !s.names.contains(&name))
            .collect();
        if let Some(first) = contradicting.first() {
            return Finding::new(
                VerdictStatus::Contradicted,
                contradicting.iter().map(|sighting| sighting.evidence),
                format!(
                    "retained Evidence knows the procedure at {address:#x} in {quoted_document:?} as {}, not {quoted_name:?}",
                    quoted_names(&first.names)
                ),
            );
        }
        let supporting: Vec<_> = seen.iter().filter(|s| s.names.contains(&name)).collect();
        if !supporting.is_empty() {
            return Finding::new(
                VerdictStatus::Supported,
                supporting.iter().map(|sighting| sighting.evidence),
                format!(
                    "retained Evidence gives the procedure at {address:#x} in {quoted_document:?} the name {quoted_name:?}"
                ),
            );
        }
        if seen.is_empty() {
            return self.procedure_absent(document, address);
        }
        Finding::new(
            VerdictStatus::Unverified,
            seen.iter().map(|sighting| sighting.evidence),
            format!(
                "retained Evidence shows a procedure at {address:#x} in {quoted_document:?} but no name that settles the claim"
            ),
        )
    }

    fn bytes_equal(&self, document: &str, address: u64, claimed: &[u8]) -> Finding {
        let quoted_document = Quoted::new(document);
        let start = u128::from(address);
        let end = start + claimed.len() as u128;
        let mut covered = vec![false; claimed.len()];
        let mut supporting = Vec::new();
        let mut contradicting = Vec::new();
        let mut first_difference = None;
        let sightings = self.bytes.get_or_init(|| byte_sightings(self.evidence));
        for sighting in sightings.iter().filter(|s| s.document == document) {
            let seen_start = u128::from(sighting.address);
            let low = start.max(seen_start);
            let high = end.min(seen_start + sighting.bytes.len() as u128);
            if low >= high {
                continue;
            }
            // Offsets below are within both ranges, so they fit in usize.
            let claimed_at = |at: u128| claimed[usize::try_from(at - start).unwrap_or(0)];
            let seen_at = |at: u128| sighting.bytes[usize::try_from(at - seen_start).unwrap_or(0)];
            match (low..high).find(|&at| claimed_at(at) != seen_at(at)) {
                Some(at) => {
                    first_difference.get_or_insert((at, seen_at(at), claimed_at(at)));
                    contradicting.push(sighting.evidence);
                }
                None => {
                    for at in low..high {
                        covered[usize::try_from(at - start).unwrap_or(0)] = true;
                    }
                    supporting.push(sighting.evidence);
                }
            }
        }
        let known = covered.iter().filter(|&&c| c).count();
        if let Some((at, seen, said)) = first_difference {
            Finding::new(
                VerdictStatus::Contradicted,
                contradicting,
                format!(
                    "retained read_bytes Evidence shows {seen:02x} at {at:#x} in {quoted_document:?}, not {said:02x}"
                ),
            )
        } else if known == claimed.len() {
            Finding::new(
                VerdictStatus::Supported,
                supporting,
                format!(
                    "retained read_bytes Evidence shows the {} bytes at {address:#x} in {quoted_document:?}",
                    claimed.len()
                ),
            )
        } else if known > 0 {
            Finding::new(
                VerdictStatus::Unverified,
                supporting,
                format!(
                    "retained read_bytes Evidence covers {known} of the {} bytes at {address:#x} in {quoted_document:?}",
                    claimed.len()
                ),
            )
        } else {
            Finding::unverified(format!(
                "no retained read_bytes Evidence covers {address:#x} in {quoted_document:?}"
            ))
        }
    }

    /// A claim about one field of an occurrence; `matches` says whether a sighting agrees and
    /// what it shows.
    fn occurrence(
        &self,
        occurrence_id: &str,
        what: &str,
        matches: impl Fn(&OccurrenceSighting<'a>) -> (bool, String),
    ) -> Finding {
        let sightings = self
            .occurrences
            .get_or_init(|| occurrence_sightings(self.evidence));
        let mut supporting = Vec::new();
        let mut contradicting = Vec::new();
        let mut shown = None;
        for sighting in sightings
            .iter()
            .filter(|s| s.occurrence_id == occurrence_id)
        {
            let (agrees, value) = matches(sighting);
            if agrees {
                supporting.push(sighting.evidence);
            } else {
                shown.get_or_insert(value);
                contradicting.push(sighting.evidence);
            }
        }
        if let Some(shown) = shown {
            Finding::new(
                VerdictStatus::Contradicted,
                contradicting,
                format!("retained Evidence shows {what} {shown} for {occurrence_id}"),
            )
        } else if !supporting.is_empty() {
            Finding::new(
                VerdictStatus::Supported,
                supporting,
                format!("retained Evidence shows this {what} for {occurrence_id}"),
            )
        } else {
            Finding::unverified(format!(
                "no retained inventory page or occurrence listing shows {occurrence_id}"
            ))
        }
    }

    /// The valid capture retained as `id`, or the unverified finding saying why not.
    fn capture(&self, id: &str) -> Result<ValidCapture<'a>, Finding> {
        let Some(record) = self.evidence.iter().find(|record| record.id == id) else {
            return Err(Finding::unverified(format!(
                "Evidence {:?} is not among the retained records",
                Quoted::new(id)
            )));
        };
        if record.operation != CAPTURE_OPERATION && record.operation != RUN_OPERATION {
            return Err(Finding::new(
                VerdictStatus::Unverified,
                [record.id],
                format!(
                    "Evidence {id} was recorded by {}, not {CAPTURE_OPERATION} or {RUN_OPERATION}",
                    record.operation
                ),
            ));
        }
        ValidCapture::new(record.result).ok_or_else(|| {
            Finding::new(
                VerdictStatus::Unverified,
                [record.id],
                format!("Evidence {id} is not a valid Process Capture v4"),
            )
        })
    }

    fn capture_exit_code(&self, id: &str, code: i64) -> Finding {
        let capture = match self.capture(id) {
            Ok(capture) => capture,
            Err(finding) => return finding,
        };
        let (status, reason) = match capture.exit() {
            Some(CaptureExit::Code(found)) if found == code => (
                VerdictStatus::Supported,
                format!("capture {id} exited with code {code}"),
            ),
            Some(CaptureExit::Code(found)) => (
                VerdictStatus::Contradicted,
                format!("capture {id} exited with code {found}, not {code}"),
            ),
            Some(CaptureExit::Signal(signal)) => (
                VerdictStatus::Contradicted,
                format!("capture {id} was ended by {signal}, not an exit code"),
            ),
            None => (
                VerdictStatus::Unverified,
                format!("capture {id} records no exit"),
            ),
        };
        Finding::new(status, [id], reason)
    }

    fn capture_digest(&self, id: &str, stream: Stream, sha256: &str) -> Finding {
        let capture = match self.capture(id) {
            Ok(capture) => capture,
            Err(finding) => return finding,
        };
        let name = match stream {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        };
        let (status, reason) = match capture.stream(stream) {
            Some(digest) if digest.sha256 == sha256 => (
                VerdictStatus::Supported,
                format!("capture {id} records this {name} digest"),
            ),
            Some(digest) if digest.truncated => (
                VerdictStatus::Unverified,
                format!(
                    "capture {id} records another {name} digest, but its {name} was truncated at {} bytes",
                    digest.bytes
                ),
            ),
            Some(digest) => (
                VerdictStatus::Contradicted,
                format!("capture {id} records {name} digest {}", digest.sha256),
            ),
            None => (
                VerdictStatus::Unverified,
                format!("capture {id} records no {name} digest"),
            ),
        };
        Finding::new(status, [id], reason)
    }
}

fn format_name(format: Option<ExecutableFormat>) -> String {
    format
        .and_then(|format| serde_json::to_value(format).ok())
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_else(|| "(unrecognised)".to_owned())
}

/// `"a", "b"`: each name once, in the order given.
fn quoted_names(names: &[&str]) -> String {
    let mut distinct: Vec<&str> = Vec::new();
    for name in names {
        if !distinct.contains(name) {
            distinct.push(name);
        }
    }
    distinct
        .iter()
        .map(|name| format!("{name:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}
