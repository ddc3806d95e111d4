//! What retained Evidence shows about procedures, bytes and occurrences, read from the result
//! shapes documented on [`super`]. Records that do not have the documented shape are skipped.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::EvidenceRecordView;
use super::parse::decode_hex;
use crate::inventory::{ExecutableFormat, INVENTORY_SCHEMA, parse_page};

/// A procedure some record shows.
pub(super) struct ProcedureSighting<'a> {
    pub(super) evidence: &'a str,
    pub(super) document: &'a str,
    pub(super) address: u64,
    /// Every name the record gives the procedure; empty when it knows none.
    pub(super) names: Vec<&'a str>,
    /// Whether `names` is every name the provider knows (so a missing name contradicts).
    pub(super) names_complete: bool,
}

/// Bytes a `read_bytes` record shows.
pub(super) struct ByteSighting<'a> {
    pub(super) evidence: &'a str,
    pub(super) document: &'a str,
    pub(super) address: u64,
    pub(super) bytes: Vec<u8>,
}

/// An occurrence an inventory page or occurrence listing shows.
pub(super) struct OccurrenceSighting<'a> {
    pub(super) evidence: &'a str,
    pub(super) occurrence_id: String,
    pub(super) sha256: String,
    pub(super) format: Option<ExecutableFormat>,
}

/// A document's complete procedure listing, reconstructed from `list_procedures` pages.
pub(super) struct Listing<'a> {
    /// The pages' Evidence IDs, in listing order.
    pub(super) evidence: Vec<&'a str>,
    /// Every address listed.
    pub(super) addresses: HashSet<u64>,
}

/// The document a record is about: the result's `document`, else the arguments'.
fn document_of<'a>(record: &EvidenceRecordView<'a>) -> Option<&'a str> {
    record
        .result
        .get("document")
        .or_else(|| record.arguments.get("document"))
        .and_then(Value::as_str)
}

/// `0x` and 1 to 16 hexadecimal digits (either case).
pub(super) fn parse_address(value: &Value) -> Option<u64> {
    let digits = value.as_str()?.strip_prefix("0x")?;
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

/// Adds the names of a `name` or alias value: a string, or `{name, raw_name}`.
fn push_names<'a>(value: Option<&'a Value>, names: &mut Vec<&'a str>) {
    match value {
        Some(Value::String(name)) => names.push(name),
        Some(Value::Object(object)) => {
            for key in ["name", "raw_name"] {
                if let Some(name) = object.get(key).and_then(Value::as_str) {
                    names.push(name);
                }
            }
        }
        _ => {}
    }
}

/// Adds the names of every value of `procedure`'s `aliases` array.
fn push_aliases<'a>(procedure: &'a Value, names: &mut Vec<&'a str>) {
    for alias in procedure
        .get("aliases")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        push_names(Some(alias), names);
    }
}

/// A procedure as `procedure_info` (or a `search_procedures` item) describes it.
fn full_sighting<'a>(
    evidence: &'a str,
    document: &'a str,
    info: &'a Value,
) -> Option<ProcedureSighting<'a>> {
    let address = parse_address(info.get("address")?)?;
    let mut names = Vec::new();
    push_names(info.get("name"), &mut names);
    push_names(info.get("raw_name"), &mut names);
    push_aliases(info, &mut names);
    Some(ProcedureSighting {
        evidence,
        document,
        address,
        names,
        names_complete: true,
    })
}

fn procedures<'a>(record: &EvidenceRecordView<'a>) -> impl Iterator<Item = &'a Value> + use<'a> {
    record
        .result
        .get("procedures")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// Every procedure the records show, in ledger order.
pub(super) fn procedure_sightings<'a>(
    evidence: &[EvidenceRecordView<'a>],
) -> Vec<ProcedureSighting<'a>> {
    let mut sightings = Vec::new();
    for record in evidence {
        let Some(document) = document_of(record) else {
            continue;
        };
        match record.operation {
            "procedure_info" => sightings.extend(full_sighting(record.id, document, record.result)),
            "search_procedures" => sightings.extend(
                procedures(record).filter_map(|info| full_sighting(record.id, document, info)),
            ),
            "list_procedures" => {
                sightings.extend(procedures(record).filter_map(|entry| {
                    let mut names = Vec::new();
                    push_names(entry.get("name"), &mut names);
                    push_aliases(entry, &mut names);
                    Some(ProcedureSighting {
                        evidence: record.id,
                        document,
                        address: parse_address(entry.get("address")?)?,
                        names,
                        names_complete: false,
                    })
                }));
            }
            _ => {}
        }
    }
    sightings
}

/// The complete listing of `document`, if the retained `list_procedures` pages form one.
pub(super) fn complete_listing<'a>(
    evidence: &[EvidenceRecordView<'a>],
    document: &str,
) -> Option<Listing<'a>> {
    let pages = || {
        evidence.iter().filter(|record| {
            record.operation == "list_procedures" && document_of(record) == Some(document)
        })
    };
    let cursor_of = |record: &EvidenceRecordView<'a>| -> Option<&'a str> {
        record.arguments.get("cursor").and_then(Value::as_str)
    };
    // The listing follows the provider of the oldest first page.
    let provider = pages().find(|record| cursor_of(record).is_none())?.provider;
    // The oldest page per cursor (`None` for the first page).
    let mut by_cursor: HashMap<Option<&str>, &EvidenceRecordView<'a>> = HashMap::new();
    for record in pages().filter(|record| record.provider == provider) {
        by_cursor.entry(cursor_of(record)).or_insert(record);
    }
    let mut listing = Listing {
        evidence: Vec::new(),
        addresses: HashSet::new(),
    };
    let mut cursor: Option<&str> = None;
    // Each step uses up one page, so a cursor cycle cannot loop forever.
    for _ in 0..by_cursor.len() {
        let record = by_cursor.remove(&cursor)?;
        listing.evidence.push(record.id);
        for entry in procedures(record) {
            listing
                .addresses
                .extend(entry.get("address").and_then(parse_address));
        }
        match record.result.get("next_cursor") {
            None | Some(Value::Null) => return Some(listing),
            Some(Value::String(next)) => cursor = Some(next.as_str()),
            Some(_) => return None,
        }
    }
    None
}

/// Every `read_bytes` record, in ledger order.
pub(super) fn byte_sightings<'a>(evidence: &[EvidenceRecordView<'a>]) -> Vec<ByteSighting<'a>> {
    evidence
        .iter()
        .filter(|record| record.operation == "read_bytes")
        .filter_map(|record| {
            Some(ByteSighting {
                evidence: record.id,
                document: document_of(record)?,
                address: parse_address(record.result.get("address")?)?,
                bytes: decode_hex(record.result.get("hex")?.as_str()?)?,
            })
        })
        .collect()
}

/// Every occurrence in valid inventory pages and occurrence listings, in ledger order.
pub(super) fn occurrence_sightings<'a>(
    evidence: &[EvidenceRecordView<'a>],
) -> Vec<OccurrenceSighting<'a>> {
    let mut sightings = Vec::new();
    for record in evidence {
        match record.operation {
            "inventory_artifacts" => {
                let looks_like_page =
                    record.result.get("schema").and_then(Value::as_str) == Some(INVENTORY_SCHEMA);
                let Some(page) = looks_like_page
                    .then(|| parse_page(record.result).ok())
                    .flatten()
                else {
                    continue;
                };
                sightings.extend(page.occurrences.into_iter().map(|occurrence| {
                    OccurrenceSighting {
                        evidence: record.id,
                        occurrence_id: occurrence.occurrence_id,
                        sha256: occurrence.sha256,
                        format: Some(occurrence.format),
                    }
                }));
            }
            "list_artifact_occurrences" => {
                let items = record
                    .result
                    .get("occurrences")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten();
                sightings.extend(items.filter_map(|item| {
                    let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_owned);
                    Some(OccurrenceSighting {
                        evidence: record.id,
                        occurrence_id: text("occurrence_id")?,
                        sha256: text("sha256")?,
                        format: item
                            .get("format")
                            .and_then(|format| serde_json::from_value(format.clone()).ok()),
                    })
                }));
            }
            _ => {}
        }
    }
    sightings
}

/// One direct call a record shows: the callee's address and names, as far as known.
pub(super) struct CallTarget<'a> {
    pub(super) address: Option<u64>,
    /// Procedure, stub or imported-symbol names of the callee.
    pub(super) names: Vec<&'a str>,
}

/// The direct calls of one procedure a `callees` or `disassemble` record shows.
pub(super) struct CallView<'a> {
    pub(super) evidence: &'a str,
    pub(super) operation: &'a str,
    pub(super) document: &'a str,
    pub(super) caller_address: u64,
    pub(super) caller_name: Option<&'a str>,
    pub(super) calls: Vec<CallTarget<'a>>,
    /// Whether `calls` is every direct call of the procedure: a first page, the last page, and
    /// a complete analysis.
    pub(super) complete: bool,
}

/// Every `callees` record and procedure `disassemble` record, in ledger order.
pub(super) fn call_views<'a>(evidence: &[EvidenceRecordView<'a>]) -> Vec<CallView<'a>> {
    evidence
        .iter()
        .filter_map(|record| {
            let calls = match record.operation {
                "callees" => items(record.result, "callees")
                    // A tail call is a jump, as `disassemble` shows it: not a call here.
                    .filter(|edge| {
                        edge.get("kind").and_then(Value::as_str).unwrap_or("call") == "call"
                    })
                    .map(|edge| {
                        let procedure = edge.get("procedure");
                        let mut names = Vec::new();
                        names.extend(
                            procedure
                                .and_then(|p| p.get("name"))
                                .and_then(Value::as_str),
                        );
                        names.extend(edge.get("import").and_then(Value::as_str));
                        CallTarget {
                            address: procedure
                                .and_then(|p| p.get("address"))
                                .and_then(parse_address),
                            names,
                        }
                    })
                    .collect(),
                "disassemble" => items(record.result, "instructions")
                    .filter(|instruction| {
                        instruction.get("target_kind").and_then(Value::as_str) == Some("call")
                    })
                    .filter_map(|instruction| {
                        Some(CallTarget {
                            address: Some(parse_address(instruction.get("target")?)?),
                            names: instruction
                                .get("target_name")
                                .and_then(Value::as_str)
                                .into_iter()
                                .collect(),
                        })
                    })
                    .collect(),
                _ => return None,
            };
            let procedure = record.result.get("procedure")?;
            let first_page = record.arguments.get("cursor").is_none_or(Value::is_null);
            let last_page = record.result.get("next_cursor") == Some(&Value::Null);
            let analysed = record
                .result
                .get("analysis")
                .and_then(|analysis| analysis.get("complete"))
                == Some(&Value::Bool(true));
            Some(CallView {
                evidence: record.id,
                operation: record.operation,
                document: document_of(record)?,
                caller_address: parse_address(procedure.get("address")?)?,
                caller_name: procedure.get("name").and_then(Value::as_str),
                calls,
                complete: first_page && last_page && analysed,
            })
        })
        .collect()
}

fn items<'a>(result: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> + use<'a> {
    result
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}
