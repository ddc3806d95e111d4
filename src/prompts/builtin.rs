//! The six guided prompts of docs/CONTRACT.md section 7.

use super::definition::{ArgumentDefinition, PromptDefinition};
use crate::core::Family;

/// The six built-in guided prompts, in listed order: `investigate_feature`,
/// `compare_application_versions`, `verify_reconstruction`, `trace_crash`,
/// `audit_residual_unknowns`, `prepare_bounded_process_capture`.
pub fn builtin_prompts() -> Vec<PromptDefinition> {
    use Family::*;
    vec![
        prompt(
            "investigate_feature",
            "Investigate a feature",
            "Trace a feature from discovery into bounded function evidence: find where the \
             feature shows in the binary, narrow it to the procedures that implement it, and \
             back each step with Evidence.",
            vec![
                required(
                    "feature",
                    "The feature to trace, in the user's words: a menu item, a message, a file \
                     format or a behaviour.",
                ),
                optional(
                    "document",
                    "The document (binary or module) to start in.",
                    Document,
                ),
                optional(
                    "procedure",
                    "A procedure to start from, as an address or a unique name.",
                    Procedure,
                ),
                optional(
                    "provider",
                    "The analysis provider to use when the session declares more than one.",
                    Provider,
                ),
            ],
            &[
                "list_documents",
                "set_current_document",
                "search_strings",
                "xrefs_to",
                "search_procedures",
                "list_procedures",
                "procedure_info",
                "disassemble",
                "decompile",
                "callees",
                "callers",
                "read_bytes",
                "get_evidence",
                "annotate",
                "register_unknown",
            ],
        ),
        prompt(
            "compare_application_versions",
            "Compare application versions",
            "Compare two shipped artifacts, with optional static and runtime follow-up: \
             inventory both, compare the inventories, then examine changed files statically and \
             against retained captures.",
            vec![
                required(
                    "baseline",
                    "The earlier version: the directory or zip archive it ships as, or a \
                     description of it.",
                ),
                required(
                    "candidate",
                    "The later version to compare with the baseline, in the same form.",
                ),
                optional(
                    "baseline_manifest",
                    "The manifest ID of a retained inventory of the baseline.",
                    ArtifactManifest,
                ),
                optional(
                    "candidate_manifest",
                    "The manifest ID of a retained inventory of the candidate.",
                    ArtifactManifest,
                ),
                optional(
                    "occurrence",
                    "One artifact occurrence (a file inside an inventory) to focus the \
                     comparison on.",
                    ArtifactOccurrence,
                ),
                optional(
                    "capture",
                    "A retained process capture to use as runtime evidence.",
                    ProcessCapture,
                ),
            ],
            &[
                "inventory_artifacts",
                "list_artifact_occurrences",
                "compare_inventories",
                "open_binary",
                "compare_procedures",
                "list_imports",
                "list_procedures",
                "procedure_info",
                "search_strings",
                "get_evidence",
                "register_unknown",
            ],
        ),
        prompt(
            "verify_reconstruction",
            "Verify a reconstruction",
            "Evaluate a finite reconstruction specification against retained comparison \
             Evidence: each claim ends supported, contradicted or unverified, citing Evidence \
             IDs.",
            vec![
                required(
                    "specification",
                    "The reconstruction to verify, as a finite list of claims about the \
                     binary's structure or behaviour.",
                ),
                optional(
                    "evidence",
                    "An Evidence ID to check the claims against first.",
                    Evidence,
                ),
                optional("document", "The document the claims are about.", Document),
                optional(
                    "procedure",
                    "A procedure the claims are about, as an address or a unique name.",
                    Procedure,
                ),
            ],
            &[
                "list_evidence",
                "get_evidence",
                "procedure_info",
                "disassemble",
                "decompile",
                "callees",
                "read_bytes",
                "verify_reconstruction",
                "annotate",
                "register_unknown",
                "resolve_unknown",
            ],
        ),
        prompt(
            "trace_crash",
            "Trace a crash",
            "Correlate a crash symptom with static paths and optional Process Capture v4 \
             evidence: locate the code the symptom points at and the paths that reach it.",
            vec![
                required(
                    "symptom",
                    "The crash as observed: a message, signal, faulting address or stack trace.",
                ),
                optional(
                    "document",
                    "The document (binary or module) that crashed.",
                    Document,
                ),
                optional(
                    "procedure",
                    "A procedure suspected of crashing, as an address or a unique name.",
                    Procedure,
                ),
                optional(
                    "capture",
                    "A retained process capture of the crashing run.",
                    ProcessCapture,
                ),
                optional(
                    "provider",
                    "The analysis provider to use when the session declares more than one.",
                    Provider,
                ),
            ],
            &[
                "list_documents",
                "set_current_document",
                "search_procedures",
                "procedure_info",
                "disassemble",
                "decompile",
                "callers",
                "xrefs_to",
                "read_bytes",
                "run_process_capture",
                "get_evidence",
                "annotate",
                "register_unknown",
            ],
        ),
        prompt(
            "audit_residual_unknowns",
            "Audit residual unknowns",
            "Audit current residual-unknown heads and evidence-qualified resolution: refine \
             what new Evidence narrows, and resolve only what existing Evidence settles.",
            vec![
                optional(
                    "unknown",
                    "A residual unknown to start the audit with.",
                    ResidualUnknown,
                ),
                optional(
                    "evidence",
                    "An Evidence ID that may refine or resolve an unknown.",
                    Evidence,
                ),
            ],
            &[
                "list_unknowns",
                "list_evidence",
                "get_evidence",
                "refine_unknown",
                "resolve_unknown",
            ],
        ),
        prompt(
            "prepare_bounded_process_capture",
            "Prepare a bounded process capture",
            "Design an approval-gated, bounded process experiment before execution: what to \
             run, what it must show, its bounds (wall time, output bytes, network) and the \
             approval it needs. run_process_capture runs it once, sandboxed and bounded, only \
             after approval; a capture made elsewhere is imported and validated instead.",
            vec![
                required(
                    "objective",
                    "What the experiment must establish, and why static evidence is not enough.",
                ),
                optional(
                    "occurrence",
                    "The artifact occurrence (a file inside an inventory) the experiment would \
                     run or observe.",
                    ArtifactOccurrence,
                ),
                optional(
                    "document",
                    "The document the experiment concerns.",
                    Document,
                ),
                optional(
                    "procedure",
                    "A procedure the experiment should exercise, as an address or a unique name.",
                    Procedure,
                ),
                optional(
                    "prior_capture",
                    "A previous process capture to build on.",
                    ProcessCapture,
                ),
            ],
            &[
                "list_artifact_occurrences",
                "open_binary",
                "list_imports",
                "procedure_info",
                "callers",
                "search_strings",
                "get_evidence",
                "register_unknown",
                "run_process_capture",
                "import_process_capture",
            ],
        ),
    ]
}

fn prompt(
    name: &str,
    title: &str,
    description: &str,
    arguments: Vec<ArgumentDefinition>,
    workflow: &[&str],
) -> PromptDefinition {
    let mut arguments = arguments;
    // Every guided prompt can be rendered for a named binary session (CONTRACT.md section 13).
    arguments.push(optional(
        "session",
        "The binary session to work in: the `session` that open_binary returned; pass it as \
         `session` to every tool call of this workflow. Default: this client's session.",
        Family::Session,
    ));
    PromptDefinition {
        name: name.to_owned(),
        title: title.to_owned(),
        description: description.to_owned(),
        arguments,
        workflow: workflow.iter().map(|tool| (*tool).to_owned()).collect(),
    }
}

/// A required, free-text argument (no completion).
fn required(name: &str, description: &str) -> ArgumentDefinition {
    ArgumentDefinition {
        name: name.to_owned(),
        description: description.to_owned(),
        required: true,
        family: None,
    }
}

/// An optional argument completed from `family`; its description says so.
fn optional(name: &str, description: &str, family: Family) -> ArgumentDefinition {
    ArgumentDefinition {
        name: name.to_owned(),
        description: format!(
            "{description} Completion suggests {} ({family} family).",
            completion_source(family)
        ),
        required: false,
        family: Some(family),
    }
}

/// What completion offers for `family`, in words for an argument description.
fn completion_source(family: Family) -> &'static str {
    match family {
        Family::Document => "document names from the current provider",
        Family::Procedure => {
            "procedure addresses, and unique procedure names once discovery is exhaustive"
        }
        Family::Provider => "provider identities declared by the open binary session",
        Family::Evidence => "Evidence IDs retained in this session",
        Family::ProcessCapture => "Evidence IDs of retained Process Capture v4 documents",
        Family::ArtifactManifest => "manifest IDs of retained artifact inventories",
        Family::ArtifactOccurrence => "occurrence IDs from retained artifact inventory pages",
        Family::ResidualUnknown => "current, unresolved residual unknowns",
        Family::Session => "the handles of the binary sessions this client opened or named",
    }
}
