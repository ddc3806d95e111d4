//! `compare_procedures`: two versions of a program, procedure by procedure (CONTRACT section
//! 11). The baseline and the candidate are documents of two binary sessions (or two
//! documents of one); the provider fingerprints each document's procedures within the bounds,
//! [`crate::core::diff::compare`] pairs them, and the result is paged: matched pairs in
//! baseline address order, then baseline-only, then candidate-only procedures. The Evidence is
//! recorded in the baseline's session. The last comparison is kept (one per store), so
//! the pages of one comparison are cut from one computation: the same call gives the same
//! pages, and reading the next page does not compare again.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::arguments::CursorArgument;
use super::definition::ToolAnnotations;
use super::outcome::{ProcedureCompareError, ToolError};
use super::spec::{Across, Handler, ToolSpec};
use crate::core::MAX_VALUE_CHARS;
use crate::core::diff::{Comparison, Fingerprint, Status, compare};
use crate::session::{
    Address, Cancel, CompareLimit, FingerprintBounds, Fingerprints, Operation, Provider, Session,
    SessionStore, Target,
};

/// Default and most entries in one page.
const DEFAULT_PAGE: u64 = 100;
const MAX_PAGE: u64 = 500;

/// Default and most procedures fingerprinted per side.
const DEFAULT_PROCEDURES: u64 = 50_000;
const MAX_PROCEDURES: u64 = 500_000;

/// Default and most seconds for both sides' fingerprints and the matching.
const DEFAULT_SECS: u64 = 30;
const MAX_SECS: u64 = 300;

/// Default and most MiB of fingerprints per side.
const DEFAULT_MIB: u64 = 256;
const MAX_MIB: u64 = 2_048;

/// Prefix of the cursors.
const CURSOR: &str = "cp:";

/// What every result says about what it shows.
const NOTE: &str = "`identical` means the same instructions with addresses masked, and the same \
    callees, imports, strings and constants: an observation of the two binaries' code. A \
    `changed` pair and its `similarity` are an inference: the matcher judged the two \
    procedures to be versions of one (the `signal` says why).";

fn default_page() -> u64 {
    DEFAULT_PAGE
}
fn default_procedures() -> u64 {
    DEFAULT_PROCEDURES
}
fn default_secs() -> u64 {
    DEFAULT_SECS
}
fn default_mib() -> u64 {
    DEFAULT_MIB
}

/// The arguments of `compare_procedures`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct CompareArguments {
    /// Handle of the baseline's binary session (the older version); default: this call's
    /// session.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    baseline: Option<String>,
    /// Handle of the candidate's binary session (the newer version); default: this call's
    /// session.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    candidate: Option<String>,
    /// Document of the baseline session; default: its current document.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    baseline_document: Option<String>,
    /// Document of the candidate session; default: its current document.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    candidate_document: Option<String>,
    #[serde(flatten)]
    page: CursorArgument,
    /// Most entries in the page (1 to 500, default 100).
    #[serde(default = "default_page")]
    #[schemars(range(min = 1, max = MAX_PAGE))]
    limit: u64,
    /// Most procedures compared per side, the first in address order (1 to 500000, default
    /// 50000).
    #[serde(default = "default_procedures")]
    #[schemars(range(min = 1, max = MAX_PROCEDURES))]
    max_procedures: u64,
    /// Most seconds for the whole comparison (1 to 300, default 30).
    #[serde(default = "default_secs")]
    #[schemars(range(min = 1, max = MAX_SECS))]
    timeout_secs: u64,
    /// Most MiB of procedure fingerprints per side (1 to 2048, default 256).
    #[serde(default = "default_mib")]
    #[schemars(range(min = 1, max = MAX_MIB))]
    max_memory_mib: u64,
}

/// `compare_procedures`, in catalog order.
pub(super) fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "compare_procedures",
        title: "Compare procedures of two versions",
        description: "Function-level comparison of two versions of a program: `baseline` and \
        `candidate` are binary session handles (default: this call's session), \
        `baseline_document`/`candidate_document` pick documents. Procedures are paired by \
        symbol name, exact bytes, an address-independent instruction hash, imported-symbol and \
        string anchors, the same name in two tables of named records in data that share most \
        of their names (`record_name`: a method table's `{\"flush\", reader_flush}`), the same \
        slot of two tables of procedure pointers that other pairs align (`pointer_table`), call-graph neighbours of pairs already made (among them the \
        one unpaired callee in the same place among a pair's calls), then the most similar \
        of all unpaired procedures by a margin (`likeness`; once more at the end with their \
        small paired callees taken in, as one version inlines them; last among procedures of \
        fewer than 8 instructions, nearly unchanged and sharing an immediate), the place \
        between two pairs \
        (`address_order`), among near-twins the immediates that tell them apart \
        (`twins`), and the same callers, at least two pairs, when only one procedure on each \
        side has them, or one pair and a decisive likeness (`same_callers`: it also overrules \
        a fuzzy pair when two paired callers of one procedure do not call the other, unless \
        nothing calls one), \
        and a constant that one procedure on each side holds and no other \
        (`constants`: a random multiplier or magic number survives edits past likeness), \
        until stable; the rounds of likeness and place (anchors and twins too) never pair two procedures \
        that every pair calling both calls in different places, nor a callee with the \
        caller that the other version inlined it into. Paged \
        (`cursor`, `limit` up to 500): `matched` pairs (`identical`, or `changed` with a \
        `similarity` in [0, 1] and what changed: size, instructions, callees, strings, \
        constants; each with the `signal` that paired it), then `only_in_baseline`, then \
        `only_in_candidate`. Bounded by `max_procedures` (default 50000), `timeout_secs` \
        (default 30) and `max_memory_mib` (default 256 per side); a cut result has `complete: \
        false` and `cut_short_by`. Deterministic. Records Evidence in the baseline's session.",
        annotations: ToolAnnotations::READ_ONLY,
        handler: Handler::across::<CompareArguments, CompareResult>(
            Operation::CompareProcedures,
            compare_procedures,
        ),
    }]
}

/// One side: its document and fingerprints.
struct Version {
    document: String,
    fingerprints: Fingerprints,
}

/// A whole comparison, from which every page is cut.
struct Computed {
    baseline: Version,
    candidate: Version,
    comparison: Comparison,
    cut_short_by: Option<CompareLimit>,
}

/// What a comparison was computed from: the two providers (held weakly, so the cache neither
/// keeps a closed binary alive nor mistakes a new provider at the same address for the old
/// one), the documents and the bounds. The page (`cursor`, `limit`) is not part of it.
struct ComparisonKey {
    baseline: Weak<dyn Provider>,
    baseline_document: String,
    candidate: Weak<dyn Provider>,
    candidate_document: String,
    bounds: (u64, u64, u64),
}

impl ComparisonKey {
    fn same(&self, other: &ComparisonKey) -> bool {
        Weak::ptr_eq(&self.baseline, &other.baseline)
            && Weak::ptr_eq(&self.candidate, &other.candidate)
            && self.baseline_document == other.baseline_document
            && self.candidate_document == other.candidate_document
            && self.bounds == other.bounds
            && self.baseline.strong_count() > 0
            && self.candidate.strong_count() > 0
    }
}

/// The last comparison, kept in the store (its [`SessionStore::memo`]) so that reading its
/// pages one by one does not compare again for each page (a large pair of binaries takes
/// tens of seconds). One entry: its memory is within the bounds of the call that made it,
/// and it goes with the next comparison of other inputs.
struct Remembered {
    key: ComparisonKey,
    computed: Arc<Computed>,
}

fn remembered(store: &SessionStore, key: &ComparisonKey) -> Option<Arc<Computed>> {
    let memo = store.memo();
    let last = memo.as_ref()?.downcast_ref::<Remembered>()?;
    last.key.same(key).then(|| Arc::clone(&last.computed))
}

fn remember(store: &SessionStore, key: ComparisonKey, computed: &Arc<Computed>) {
    *store.memo() = Some(Arc::new(Remembered {
        key,
        computed: Arc::clone(computed),
    }));
}

fn side(
    store: &SessionStore,
    handle: Option<&str>,
    default: Option<&str>,
    document: Option<&str>,
    arguments: (&'static str, &'static str),
) -> Result<(Arc<Session>, String, Target), ToolError> {
    let (session_argument, document_argument) = arguments;
    let handle = handle.or(default).ok_or(ProcedureCompareError::NoSession {
        argument: session_argument,
    })?;
    let session = store
        .get(handle)
        .map_err(|source| ProcedureCompareError::Store {
            argument: session_argument,
            source,
        })?;
    let argument = if document.is_some() {
        document_argument
    } else {
        session_argument
    };
    let target = session
        .target(None, document)
        .map_err(|source| ProcedureCompareError::Session { argument, source })?;
    super::outcome::check_support(&target, Operation::CompareProcedures)?;
    Ok((session, handle.to_owned(), target))
}

fn fingerprint(
    target: &Target,
    bounds: &FingerprintBounds,
    argument: &'static str,
) -> Result<Version, ToolError> {
    let document = target
        .document()
        .map_err(|source| ProcedureCompareError::Session { argument, source })?
        .to_owned();
    let fingerprints = target
        .query_document(|provider, document| provider.fingerprints(document, bounds))
        .map_err(|source| ProcedureCompareError::Session { argument, source })?;
    if fingerprints.total == 0 {
        return Err(ProcedureCompareError::Empty {
            argument,
            document: document.as_str().into(),
        }
        .into());
    }
    Ok(Version {
        document,
        fingerprints,
    })
}

fn compare_procedures(
    store: &SessionStore,
    default: Option<&str>,
    arguments: CompareArguments,
    cancel: &Cancel,
) -> Result<Across, ToolError> {
    let (baseline_session, baseline_handle, baseline_target) = side(
        store,
        arguments.baseline.as_deref(),
        default,
        arguments.baseline_document.as_deref(),
        ("baseline", "baseline_document"),
    )?;
    let (_, candidate_handle, candidate_target) = side(
        store,
        arguments.candidate.as_deref(),
        default,
        arguments.candidate_document.as_deref(),
        ("candidate", "candidate_document"),
    )?;
    if baseline_handle == candidate_handle
        && baseline_target.document().ok() == candidate_target.document().ok()
    {
        return Err(ProcedureCompareError::SameDocument {
            document: baseline_target.document().unwrap_or_default().into(),
        }
        .into());
    }
    let key = ComparisonKey {
        baseline: Arc::downgrade(baseline_target.provider()),
        baseline_document: baseline_target.document().unwrap_or_default().to_owned(),
        candidate: Arc::downgrade(candidate_target.provider()),
        candidate_document: candidate_target.document().unwrap_or_default().to_owned(),
        bounds: (
            arguments.max_procedures,
            arguments.timeout_secs,
            arguments.max_memory_mib,
        ),
    };
    let computed = match remembered(store, &key) {
        Some(computed) => computed,
        None => {
            let computed = Arc::new(compute(
                &baseline_target,
                &candidate_target,
                &arguments,
                cancel,
            )?);
            remember(store, key, &computed);
            computed
        }
    };
    let result = page(
        &computed,
        arguments.page.cursor.as_deref(),
        usize::try_from(arguments.limit).unwrap_or(usize::MAX),
    )?;
    let reply = super::spec::encode_result("compare_procedures", &result)?;
    let mut recorded: Map<String, Value> = Map::new();
    recorded.insert(
        "baseline_document".into(),
        computed.baseline.document.clone().into(),
    );
    recorded.insert(
        "candidate_document".into(),
        computed.candidate.document.clone().into(),
    );
    for (key, value) in [
        ("cursor", arguments.page.cursor.map(Value::from)),
        ("limit", Some(arguments.limit.into())),
        ("max_procedures", Some(arguments.max_procedures.into())),
        ("timeout_secs", Some(arguments.timeout_secs.into())),
        ("max_memory_mib", Some(arguments.max_memory_mib.into())),
    ] {
        if let Some(value) = value {
            recorded.insert(key.into(), value);
        }
    }
    let observation = baseline_target.observation(
        "compare_procedures",
        Value::Object(recorded),
        Value::Object(reply.clone()),
    );
    Ok(Across {
        session: baseline_session,
        observation,
        reply,
    })
}

/// Both sides' fingerprints and their comparison, within the call's bounds.
fn compute(
    baseline_target: &Target,
    candidate_target: &Target,
    arguments: &CompareArguments,
    cancel: &Cancel,
) -> Result<Computed, ToolError> {
    let deadline = Instant::now() + Duration::from_secs(arguments.timeout_secs);
    let bounds = FingerprintBounds {
        max_procedures: usize::try_from(arguments.max_procedures).unwrap_or(usize::MAX),
        max_bytes: usize::try_from(arguments.max_memory_mib.saturating_mul(1 << 20))
            .unwrap_or(usize::MAX),
        deadline,
    };
    let baseline = fingerprint(baseline_target, &bounds, "baseline_document")?;
    let candidate = fingerprint(candidate_target, &bounds, "candidate_document")?;
    if baseline.fingerprints.architecture != candidate.fingerprints.architecture {
        return Err(ProcedureCompareError::Architectures {
            baseline: baseline.document.as_str().into(),
            baseline_architecture: baseline.fingerprints.architecture.clone(),
            candidate: candidate.document.as_str().into(),
            candidate_architecture: candidate.fingerprints.architecture.clone(),
        }
        .into());
    }
    let comparison = compare(
        &baseline.fingerprints.procedures,
        &candidate.fingerprints.procedures,
        &mut || Instant::now() > deadline || cancel.check().is_err(),
    );
    cancel.check().map_err(|_| ToolError::Cancelled {
        tool: "compare_procedures",
    })?;
    let cut_short_by = if comparison.stopped {
        Some(CompareLimit::Time)
    } else {
        baseline
            .fingerprints
            .cut_short_by
            .or(candidate.fingerprints.cut_short_by)
    };
    Ok(Computed {
        baseline,
        candidate,
        comparison,
        cut_short_by,
    })
}

/// One side as the result describes it.
#[derive(Serialize, JsonSchema)]
pub(super) struct SideSummary {
    /// The document compared.
    document: String,
    /// Its architecture.
    architecture: String,
    /// Procedures the document has.
    procedures: u64,
    /// Procedures compared (fewer when a bound cut the list).
    compared: u64,
}

/// One matched pair.
#[derive(Serialize, JsonSchema)]
pub(super) struct MatchedPair {
    /// Start address of the baseline procedure.
    baseline: String,
    /// Its name, or null in a binary without symbols for it.
    baseline_name: Option<String>,
    /// Start address of the candidate procedure.
    candidate: String,
    /// Its name, or null.
    candidate_name: Option<String>,
    /// `identical` or `changed`.
    #[schemars(extend("enum" = ["identical", "changed"]))]
    status: &'static str,
    /// 1 for identical; in [0, 1) for changed: how alike the matcher judged them (an
    /// inference).
    similarity: f64,
    /// What paired them: `symbol_name`, `exact_bytes`, `instruction_hash`, `anchors`,
    /// `record_name`, `pointer_table`, `call_graph`, `likeness`, `address_order`, `twins`, `same_callers` or
    /// `constants`.
    #[schemars(extend("enum" = ["symbol_name", "exact_bytes", "instruction_hash", "anchors", "record_name", "pointer_table", "call_graph", "likeness", "address_order", "twins", "same_callers", "constants"]))]
    signal: &'static str,
    /// What differs: `size`, `instructions`, `callees`, `strings`, `constants` (empty when
    /// identical).
    changed: Vec<&'static str>,
}

/// A procedure in one version only.
#[derive(Serialize, JsonSchema)]
pub(super) struct Unmatched {
    /// Its start address.
    address: String,
    /// Its name, or null.
    name: Option<String>,
}

/// Counts over the whole comparison, not only this page.
#[derive(Serialize, JsonSchema)]
pub(super) struct Totals {
    /// Matched pairs.
    matched: u64,
    /// Identical pairs.
    identical: u64,
    /// Changed pairs.
    changed: u64,
    /// Baseline procedures without a match.
    only_in_baseline: u64,
    /// Candidate procedures without a match.
    only_in_candidate: u64,
}

/// The result of `compare_procedures`.
#[derive(Serialize, JsonSchema)]
pub(super) struct CompareResult {
    /// The baseline.
    baseline: SideSummary,
    /// The candidate.
    candidate: SideSummary,
    /// This page's matched pairs, in baseline address order.
    matched: Vec<MatchedPair>,
    /// This page's baseline procedures without a match, in address order.
    only_in_baseline: Vec<Unmatched>,
    /// This page's candidate procedures without a match, in address order.
    only_in_candidate: Vec<Unmatched>,
    /// Counts over the whole comparison.
    totals: Totals,
    /// Cursor of the next page; null on the last page.
    next_cursor: Option<String>,
    /// Whether every procedure of both documents was compared to the fixpoint.
    complete: bool,
    /// The bound that cut the comparison (`procedures`, `time`, `memory`, or `analysis` when
    /// the code analysis itself was cut); null when complete.
    #[schemars(with = "Option<String>", extend("enum" = ["procedures", "time", "memory", "analysis", null]))]
    cut_short_by: Option<CompareLimit>,
    /// What an identical pair and a similarity are.
    note: &'static str,
}

fn summary(version: &Version) -> SideSummary {
    SideSummary {
        document: version.document.clone(),
        architecture: version.fingerprints.architecture.clone(),
        procedures: version.fingerprints.total as u64,
        compared: version.fingerprints.procedures.len() as u64,
    }
}

fn unmatched(procedure: &Fingerprint) -> Unmatched {
    Unmatched {
        address: Address::new(procedure.address).to_string(),
        name: procedure.name.clone(),
    }
}

fn page(
    computed: &Computed,
    cursor: Option<&str>,
    limit: usize,
) -> Result<CompareResult, ToolError> {
    let Computed {
        baseline,
        candidate,
        comparison,
        cut_short_by,
    } = computed;
    let cut_short_by = *cut_short_by;
    let (pairs, left, right) = (
        comparison.pairs.len(),
        comparison.only_in_baseline.len(),
        comparison.only_in_candidate.len(),
    );
    let total = pairs + left + right;
    let start = match cursor {
        None => 0,
        Some(text) => text
            .strip_prefix(CURSOR)
            .and_then(|offset| offset.parse::<usize>().ok())
            .filter(|&offset| offset > 0 && offset < total)
            .ok_or_else(|| ProcedureCompareError::Cursor {
                cursor: text.into(),
                total,
            })?,
    };
    let end = start.saturating_add(limit).min(total);
    let b = &baseline.fingerprints.procedures;
    let c = &candidate.fingerprints.procedures;
    let matched = comparison.pairs[start.min(pairs)..end.min(pairs)]
        .iter()
        .map(|pair| {
            let (x, y) = (&b[pair.baseline as usize], &c[pair.candidate as usize]);
            MatchedPair {
                baseline: Address::new(x.address).to_string(),
                baseline_name: x.name.clone(),
                candidate: Address::new(y.address).to_string(),
                candidate_name: y.name.clone(),
                status: match pair.status {
                    Status::Identical => "identical",
                    Status::Changed => "changed",
                },
                similarity: (pair.similarity * 1000.0).round() / 1000.0,
                signal: pair.signal.name(),
                changed: pair.changes.names(),
            }
        })
        .collect();
    let window = |from: usize, count: usize| {
        (start.clamp(from, from + count) - from)..(end.clamp(from, from + count) - from)
    };
    let only_in_baseline = comparison.only_in_baseline[window(pairs, left)]
        .iter()
        .map(|&index| unmatched(&b[index as usize]))
        .collect();
    let only_in_candidate = comparison.only_in_candidate[window(pairs + left, right)]
        .iter()
        .map(|&index| unmatched(&c[index as usize]))
        .collect();
    let identical = comparison
        .pairs
        .iter()
        .filter(|pair| pair.status == Status::Identical)
        .count();
    Ok(CompareResult {
        baseline: summary(baseline),
        candidate: summary(candidate),
        matched,
        only_in_baseline,
        only_in_candidate,
        totals: Totals {
            matched: pairs as u64,
            identical: identical as u64,
            changed: (pairs - identical) as u64,
            only_in_baseline: left as u64,
            only_in_candidate: right as u64,
        },
        next_cursor: (end < total).then(|| format!("{CURSOR}{end}")),
        complete: cut_short_by.is_none(),
        cut_short_by,
        note: NOTE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_names_every_signal_and_status() {
        let schema = serde_json::to_value(schemars::schema_for!(MatchedPair)).expect("a schema");
        let listed = |field: &str| -> Vec<String> {
            schema["properties"][field]["enum"]
                .as_array()
                .expect("an enum")
                .iter()
                .map(|name| name.as_str().expect("a name").to_owned())
                .collect()
        };
        let signals: Vec<&str> = crate::core::diff::Signal::ALL
            .iter()
            .map(|signal| signal.name())
            .collect();
        assert_eq!(listed("signal"), signals);
        assert_eq!(listed("status"), ["identical", "changed"]);
    }
}
