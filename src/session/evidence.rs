//! The Evidence ledger: one record per successful observing tool call (docs/CONTRACT.md
//! section 10).
//!
//! # What the cap counts
//!
//! [`MAX_LEDGER_BYTES`] bounds the memory the records occupy, not their JSON: each record
//! counts [`record_cost`], an estimate of every heap allocation it holds (the record and its
//! `Arc`, its strings, each `Value` array's buffer, each object's B-tree nodes and keys, its
//! share of the ID list completion reads), each rounded up as glibc's allocator rounds it (16
//! bytes, with an 8-byte header, at least 32). Records are kept as `serde_json::Value` trees,
//! because claims and resources read them field by field; a small object costs a 632-byte
//! B-tree node however few keys it has, so a one-byte `read_bytes` record, about 90 bytes of
//! JSON, counts about 2 KB. Measured on the release server: filling the ledger with such
//! records (33,811 of them) raises the peak resident set by 65.6 MB, 1.0 times the 64 MiB
//! counted (it was 22 times when the cap counted JSON bytes).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::budget::{LedgerBudget, Take};
use crate::core::{Completion, Prefix, complete_ordered, extends_ordered};

/// Source of Evidence ID numbers for the whole process: IDs are never reused, even after a
/// session is closed.
static NEXT_EVIDENCE_NUMBER: AtomicU64 = AtomicU64::new(1);

/// Digits after the `ev-` prefix. Fixed width keeps string order equal to creation order
/// for the first 10^12 - 1 IDs of a process.
const EVIDENCE_DIGITS: usize = 12;

/// An Evidence ID: `ev-` and twelve decimal digits, e.g. `ev-000000000042`.
///
/// IDs are ASCII, unique in the process, and sort as strings in creation order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct EvidenceId(String);

/// Text that is not an Evidence ID.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not an Evidence ID: expected `ev-` followed by twelve digits")]
pub struct EvidenceIdError {
    /// The rejected text.
    pub text: crate::text::Quoted,
}

impl EvidenceId {
    fn next() -> EvidenceId {
        let number = NEXT_EVIDENCE_NUMBER.fetch_add(1, Ordering::Relaxed);
        EvidenceId::numbered(number)
    }

    /// The ID of `number` (one a store shared by several processes issued).
    fn numbered(number: u64) -> EvidenceId {
        EvidenceId(format!("ev-{number:0EVIDENCE_DIGITS$}"))
    }

    /// Makes the process's numbering continue at `next` or later: a store resumed at start-up
    /// raises it past every ID it ever held, so no ID is issued twice in the store's life.
    pub(crate) fn continue_at(next: u64) {
        NEXT_EVIDENCE_NUMBER.fetch_max(next, Ordering::Relaxed);
    }

    /// Checks the syntax of an Evidence ID (it does not say whether the ID exists).
    pub fn parse(text: &str) -> Result<EvidenceId, EvidenceIdError> {
        let valid = text.strip_prefix("ev-").is_some_and(|digits| {
            digits.len() == EVIDENCE_DIGITS && digits.bytes().all(|b| b.is_ascii_digit())
        });
        if valid {
            Ok(EvidenceId(text.to_owned()))
        } else {
            Err(EvidenceIdError { text: text.into() })
        }
    }

    /// The ID as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EvidenceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for EvidenceId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// One retained observation.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct EvidenceRecord {
    /// The Evidence ID.
    pub id: EvidenceId,
    /// Position in the session's ledger, from 1.
    // Restarts when the ledger is cleared.
    pub sequence: u64,
    /// The tool that observed it.
    pub operation: String,
    /// The arguments of that call, as given.
    #[schemars(with = "serde_json::Map<String, Value>")]
    pub arguments: Value,
    /// The result of that call (without its `evidence_id`).
    #[schemars(with = "serde_json::Map<String, Value>")]
    pub result: Value,
    /// The provider that answered, if any.
    pub provider: Option<String>,
    /// The document observed, if any.
    pub document: Option<String>,
}

/// What a tool observed, before the ledger gives it an ID.
///
/// Build it with [`Observation::unbound`] for calls that do not depend on the open binary, or
/// with [`crate::session::Target::observation`] for calls that went to a provider: those are
/// only recorded while the same binary is still open.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    pub(crate) operation: String,
    pub(crate) arguments: Value,
    pub(crate) result: Value,
    pub(crate) binding: Option<Binding>,
}

/// The binary session an observation was made in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Binding {
    pub(crate) epoch: u64,
    pub(crate) provider: String,
    pub(crate) document: Option<String>,
}

impl Observation {
    /// An observation that does not depend on the open binary (no provider, no document).
    pub fn unbound(operation: impl Into<String>, arguments: Value, result: Value) -> Observation {
        Observation {
            operation: operation.into(),
            arguments,
            result,
            binding: None,
        }
    }

    /// The operation (tool name).
    pub fn operation(&self) -> &str {
        &self.operation
    }
}

/// A page of the ledger, oldest first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EvidencePage {
    /// The records of this page.
    pub records: Vec<Arc<EvidenceRecord>>,
    /// Cursor of the next page (the last ID of this page); `None` on the last page.
    pub next_cursor: Option<EvidenceId>,
}

/// Most bytes of memory the ledger's records occupy (each counted by [`record_cost`]).
pub const MAX_LEDGER_BYTES: usize = 64 << 20;

/// Most bytes of one record (the compact JSON of its arguments and result).
pub const MAX_RECORD_BYTES: usize = 256 << 10;

/// Deepest nesting of retained JSON: `{"a": [1]}` is 2 levels deep, a scalar 0.
pub const MAX_JSON_DEPTH: usize = 64;

/// Why the ledger refused a record. Nothing was recorded.
///
/// # The bounds
///
/// Everything the ledger retains can be listed and fetched again, and its memory is bounded:
///
/// | bound | constant | value | past it |
/// |---|---|---|---|
/// | memory the records occupy (see [`record_cost`]) | [`MAX_LEDGER_BYTES`] | 64 MiB | [`LedgerError::Full`]: close the binary to start a new ledger |
/// | bytes of one record | [`MAX_RECORD_BYTES`] | 256 KiB | [`LedgerError::RecordTooLarge`]: ask for a smaller page (the tools halve a paged tool's page until it fits, [`fits_one_record`]) |
/// | nesting depth of retained JSON | [`MAX_JSON_DEPTH`] | 64 levels | [`LedgerError::TooDeep`] |
///
/// The record bound keeps every record fetchable with `get_evidence` under the tool result
/// bound (`crate::tools::MAX_RESULT_BYTES`, 1 MiB, which counts the result twice: as
/// structured content and as its JSON text); the depth bound keeps every response that embeds
/// retained JSON well under the 128 levels JSON parsers accept.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// The ledger holds [`MAX_LEDGER_BYTES`] already.
    #[error(
        "the Evidence ledger is full: the open sessions retain {retained} bytes and this \
         {operation} record needs {needed} more, over the limit of {limit} bytes; close a binary \
         session (close_binary) to free its ledger"
    )]
    Full {
        /// The tool whose record was refused.
        operation: String,
        /// Bytes retained.
        retained: usize,
        /// Bytes the record needs.
        needed: usize,
        /// [`MAX_LEDGER_BYTES`].
        limit: usize,
    },
    /// This session's ledger holds its share of the budget the sessions share (over HTTP a
    /// quarter of it, so one client cannot take every other client's room).
    #[error(
        "this session's Evidence ledger holds {held} bytes and this {operation} record needs \
         {needed} more, over the share of {share} bytes one session may hold of the ledger \
         budget the open sessions share; close this binary session (close_binary) and open a \
         new one to start a new ledger"
    )]
    ShareFull {
        /// The tool whose record was refused.
        operation: String,
        /// Bytes this ledger retains.
        held: usize,
        /// Bytes the record needs.
        needed: usize,
        /// Most bytes one ledger may hold.
        share: usize,
    },
    /// One record would be larger than [`MAX_RECORD_BYTES`].
    #[error(
        "the {operation} record would be more than {limit} bytes of JSON, the limit for one \
         Evidence record; ask for less at a time (a smaller limit or page_size) or import a \
         smaller document"
    )]
    RecordTooLarge {
        /// The tool whose record was refused.
        operation: String,
        /// [`MAX_RECORD_BYTES`].
        limit: usize,
    },
    /// Retained JSON would nest deeper than [`MAX_JSON_DEPTH`].
    #[error(
        "the {field} of this {operation} call nests more than {limit} levels deep, the limit for \
         JSON the Evidence ledger retains; flatten the document"
    )]
    TooDeep {
        /// The tool whose record was refused.
        operation: String,
        /// `arguments` or `result`.
        field: &'static str,
        /// [`MAX_JSON_DEPTH`].
        limit: usize,
    },
}

/// The nesting depth of `value`, counting no further than `limit + 1`.
pub fn json_depth_exceeds(value: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth + 1 > limit {
            return true;
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    false
}

/// Whether a record of `operation` with `arguments` and a result of `result_bytes` bytes of
/// JSON stays within [`MAX_RECORD_BYTES`]: the ledger's own count, asked before recording so
/// that a caller can ask for less instead.
pub fn fits_one_record(
    operation: &str,
    arguments: &Map<String, Value>,
    result_bytes: usize,
) -> Result<(), LedgerError> {
    MAX_RECORD_BYTES
        .checked_sub(result_bytes)
        .and_then(|room| json_bytes(&[arguments], room))
        .map(|_| ())
        .ok_or_else(|| LedgerError::RecordTooLarge {
            operation: operation.to_owned(),
            limit: MAX_RECORD_BYTES,
        })
}

/// The length of the compact JSON of `values`, or `None` past `limit`.
fn json_bytes<T: Serialize>(values: &[&T], limit: usize) -> Option<usize> {
    struct Counter {
        count: usize,
        limit: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.count += bytes.len();
            if self.count > self.limit {
                return Err(std::io::Error::other("over the limit"));
            }
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter { count: 0, limit };
    for value in values {
        serde_json::to_writer(&mut counter, value).ok()?;
    }
    Some(counter.count)
}

/// Bytes glibc's allocator takes for a request of `bytes`: an 8-byte header, 16-byte
/// granules, at least 32 bytes; nothing for an empty request (no allocation).
fn allocation(bytes: usize) -> usize {
    if bytes == 0 {
        0
    } else {
        (bytes + 8).next_multiple_of(16).max(32)
    }
}

/// Entries of a B-tree node of the standard library (`B` = 6).
const BTREE_CAPACITY: usize = 11;

/// Estimated heap bytes the allocations of `value` occupy (not counting the `Value` itself):
/// string buffers, array buffers, object B-tree nodes (a leaf holds up to 11 entries and is
/// counted as holding 6 once the map is past one node, the worst the tree's splits leave) and
/// their keys.
pub fn value_heap_bytes(value: &Value) -> usize {
    let value_size = std::mem::size_of::<Value>();
    let mut total = 0usize;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(text) => total += allocation(text.capacity()),
            Value::Array(items) => {
                total += allocation(items.capacity() * value_size);
                stack.extend(items);
            }
            Value::Object(map) => {
                let leaf = 16 + BTREE_CAPACITY * (std::mem::size_of::<String>() + value_size);
                let internal = leaf + (BTREE_CAPACITY + 1) * std::mem::size_of::<usize>();
                let entries = map.len();
                total += match entries {
                    0 => 0,
                    1..=BTREE_CAPACITY => allocation(leaf),
                    _ => {
                        let leaves = entries.div_ceil(BTREE_CAPACITY / 2 + 1);
                        leaves * allocation(leaf)
                            + leaves.div_ceil(BTREE_CAPACITY / 2 + 1) * allocation(internal)
                    }
                };
                for (key, child) in map {
                    total += allocation(key.capacity());
                    stack.push(child);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    total
}

/// The memory a record of `observation` occupies in the ledger, as [`MAX_LEDGER_BYTES`]
/// counts it: the record in its `Arc`, its slot in the ledger, its ID (twice: the record's and
/// the list completion reads), the operation, provider and document names, and the heap of its
/// arguments and result ([`value_heap_bytes`]).
pub fn record_cost(observation: &Observation) -> usize {
    let (provider, document) = observation
        .binding
        .as_ref()
        .map_or((None, None), |binding| {
            (Some(binding.provider.as_str()), binding.document.as_deref())
        });
    cost_of(
        &observation.operation,
        provider,
        document,
        &observation.arguments,
        &observation.result,
    )
}

/// [`record_cost`] of a record as it was retained (a record read back from the store).
fn stored_cost(record: &EvidenceRecord) -> usize {
    cost_of(
        &record.operation,
        record.provider.as_deref(),
        record.document.as_deref(),
        &record.arguments,
        &record.result,
    )
}

fn cost_of(
    operation: &str,
    provider: Option<&str>,
    document: Option<&str>,
    arguments: &Value,
    result: &Value,
) -> usize {
    let id = allocation("ev-".len() + EVIDENCE_DIGITS);
    allocation(std::mem::size_of::<EvidenceRecord>() + 2 * std::mem::size_of::<usize>())
        + std::mem::size_of::<Arc<EvidenceRecord>>()
        + 2 * id
        + std::mem::size_of::<String>()
        + allocation(operation.len())
        + provider.map_or(0, |p| allocation(p.len()))
        + document.map_or(0, |d| allocation(d.len()))
        + value_heap_bytes(arguments)
        + value_heap_bytes(result)
}

impl Default for LedgerBudget {
    fn default() -> LedgerBudget {
        LedgerBudget::new(MAX_LEDGER_BYTES)
    }
}

/// A record [`Ledger::prepare_as`] made, not yet appended.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The record.
    pub(crate) record: Arc<EvidenceRecord>,
    /// Its memory, taken from the budget.
    cost: usize,
}

/// Retained Evidence in creation order.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    records: Vec<Arc<EvidenceRecord>>,
    /// Memory the records occupy ([`record_cost`] of each).
    bytes: usize,
    /// The IDs as completion reads them, built on first use after a change and then shared,
    /// so a completion request does not copy every ID.
    id_snapshot: Option<Arc<[String]>>,
    /// The budget `bytes` are taken from, shared by every ledger of one store.
    budget: Arc<LedgerBudget>,
    /// Some ID does not [`extends_ordered`] the one before it, so the ledger is not its own
    /// prefix index (never, for the IDs [`EvidenceId::next`] issues).
    unordered: bool,
}

impl Drop for Ledger {
    fn drop(&mut self) {
        self.budget.give_back(self.bytes);
    }
}

impl Ledger {
    /// An empty ledger drawing on `budget`.
    pub(crate) fn with_budget(budget: Arc<LedgerBudget>) -> Ledger {
        Ledger {
            records: Vec::new(),
            bytes: 0,
            id_snapshot: None,
            budget,
            unordered: false,
        }
    }

    /// The record `observation` would be appended as, when it fits the bounds (see the module
    /// documentation): its ID is issued and its memory taken from the budget, but the ledger
    /// does not hold it until [`Ledger::push`] (or [`Ledger::abandon`] gives the memory back).
    /// Between the two, nothing else may change the ledger.
    /// The ID is that of `number` when the store issued one (a store shared by several
    /// processes), else the process's next.
    pub(crate) fn prepare_as(
        &mut self,
        observation: Observation,
        number: Option<u64>,
    ) -> Result<Prepared, LedgerError> {
        let operation = || observation.operation.clone();
        for (field, value) in [
            ("arguments", &observation.arguments),
            ("result", &observation.result),
        ] {
            if json_depth_exceeds(value, MAX_JSON_DEPTH) {
                return Err(LedgerError::TooDeep {
                    operation: operation(),
                    field,
                    limit: MAX_JSON_DEPTH,
                });
            }
        }
        json_bytes(
            &[&observation.arguments, &observation.result],
            MAX_RECORD_BYTES,
        )
        .ok_or_else(|| LedgerError::RecordTooLarge {
            operation: operation(),
            limit: MAX_RECORD_BYTES,
        })?;
        let needed = record_cost(&observation);
        match self.budget.try_take_for(self.bytes, needed) {
            Take::Granted => {}
            Take::OverShare => {
                return Err(LedgerError::ShareFull {
                    operation: operation(),
                    held: self.bytes,
                    needed,
                    share: self.budget.share(),
                });
            }
            Take::Full => {
                return Err(LedgerError::Full {
                    operation: operation(),
                    retained: self.budget.used(),
                    needed,
                    limit: self.budget.limit(),
                });
            }
        }
        let (provider, document) = match observation.binding {
            Some(binding) => (Some(binding.provider), binding.document),
            None => (None, None),
        };
        let record = Arc::new(EvidenceRecord {
            id: number.map_or_else(EvidenceId::next, EvidenceId::numbered),
            sequence: self.records.len() as u64 + 1,
            operation: observation.operation,
            arguments: observation.arguments,
            result: observation.result,
            provider,
            document,
        });
        Ok(Prepared {
            record,
            cost: needed,
        })
    }

    /// Gives back the memory of a record [`Ledger::prepare_as`] made and that is not appended.
    pub(crate) fn abandon(&self, prepared: Prepared) {
        self.budget.give_back(prepared.cost);
    }

    /// A ledger holding `records` (read back from the store, oldest first), drawing on
    /// `budget`; refused when they do not fit it.
    pub(crate) fn restore(
        budget: Arc<LedgerBudget>,
        records: Vec<Arc<EvidenceRecord>>,
    ) -> Result<Ledger, LedgerError> {
        let mut ledger = Ledger::with_budget(budget);
        for record in records {
            let needed = stored_cost(&record);
            // What a session held before the restart it holds again: only the limit counts.
            if ledger.budget.try_take_for(0, needed) != Take::Granted {
                return Err(LedgerError::Full {
                    operation: record.operation.clone(),
                    retained: ledger.budget.used(),
                    needed,
                    limit: ledger.budget.limit(),
                });
            }
            ledger.bytes += needed;
            let last = ledger.records.last().map(|last| last.id.as_str());
            ledger.unordered |= !extends_ordered(last, record.id.as_str());
            ledger.records.push(record);
        }
        Ok(ledger)
    }

    /// The budget this ledger draws on.
    pub(crate) fn budget(&self) -> &Arc<LedgerBudget> {
        &self.budget
    }

    /// Memory the records occupy (see [`MAX_LEDGER_BYTES`]).
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Appends the record [`Ledger::prepare_as`] made.
    pub(crate) fn push(&mut self, prepared: Prepared) -> Arc<EvidenceRecord> {
        let Prepared { record, cost } = prepared;
        self.bytes += cost;
        let last = self.records.last().map(|last| last.id.as_str());
        self.unordered |= !extends_ordered(last, record.id.as_str());
        self.records.push(Arc::clone(&record));
        self.id_snapshot = None;
        record
    }

    /// The record with this ID. IDs increase along the ledger, so a binary search finds it.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<EvidenceRecord>> {
        self.records
            .binary_search_by(|record| record.id.as_str().cmp(id))
            .ok()
            .map(|index| Arc::clone(&self.records[index]))
    }

    pub(crate) fn ids(&mut self) -> Arc<[String]> {
        let records = &self.records;
        Arc::clone(
            self.id_snapshot
                .get_or_insert_with(|| records.iter().map(|record| record.id.0.clone()).collect()),
        )
    }

    /// Completion over the IDs, oldest first, when they are ordered: two binary searches over
    /// the records, no copy of the IDs. Equal to `complete()` over [`Ledger::ids`].
    pub(crate) fn complete_ids(&self, prefix: &Prefix) -> Option<Completion> {
        let records = &self.records;
        (!self.unordered)
            .then(|| complete_ordered(prefix, records.len(), |at| records[at].id.as_str()))
    }

    pub(crate) fn page(&self, after: Option<&EvidenceId>, limit: usize) -> EvidencePage {
        let start = after.map_or(0, |after| {
            self.records
                .partition_point(|record| record.id.as_str() <= after.as_str())
        });
        let end = self.records.len().min(start.saturating_add(limit.max(1)));
        let records = self.records[start..end].to_vec();
        let next_cursor = (end < self.records.len())
            .then(|| records.last().map(|record| record.id.clone()))
            .flatten();
        EvidencePage {
            records,
            next_cursor,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }

    /// Every record, oldest first.
    pub(crate) fn records(&self) -> &[Arc<EvidenceRecord>] {
        &self.records
    }

    /// Whether the ledger holds a record with this ID.
    pub(crate) fn contains(&self, id: &str) -> bool {
        self.records
            .binary_search_by(|record| record.id.as_str().cmp(id))
            .is_ok()
    }

    /// Drops every record; returns how many there were.
    pub(crate) fn clear(&mut self) -> usize {
        let count = self.records.len();
        self.records.clear();
        self.budget.give_back(self.bytes);
        self.bytes = 0;
        self.id_snapshot = None;
        self.unordered = false;
        count
    }
}
