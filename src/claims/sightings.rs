//! What retained Evidence shows about procedures, bytes, occurrences and calls, read through the
//! typed views of the documented result shapes ([`super::shapes`]). Records without the fields
//! a sighting needs are skipped.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::EvidenceRecordView;
use super::parse::decode_hex;
use super::shapes::{
    Bytes, CallPage, Documented, Loose, NameValue, OccurrenceList, Paged, Present, Procedure,
    ProcedurePage, Schema, items, owned, view,
};
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
    let of = |value: &'a Value| view::<Documented<'a>>(value).and_then(|d| d.document);
    match of(record.result).or_else(|| of(record.arguments))? {
        Loose::Shaped(document) => Some(document),
        Loose::Other(_) => None,
    }
}

/// `0x` and 1 to 16 hexadecimal digits (either case).
pub(super) fn parse_address(text: &str) -> Option<u64> {
    let digits = text.strip_prefix("0x")?;
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

/// The address of a field, when it is one.
fn address_of(field: Loose<&str>) -> Option<u64> {
    field.shaped().and_then(parse_address)
}

/// Every name a procedure gives itself: its name, its raw name (when `raw`) and its aliases.
fn names_of(procedure: Procedure<'_>, raw: bool) -> (Option<u64>, Vec<&str>) {
    let mut names: Vec<&str> = procedure
        .name
        .shaped()
        .into_iter()
        .flat_map(NameValue::names)
        .collect();
    if raw {
        names.extend(
            procedure
                .raw_name
                .shaped()
                .into_iter()
                .flat_map(NameValue::names),
        );
    }
    names.extend(items(procedure.aliases).flat_map(NameValue::names));
    (address_of(procedure.address), names)
}

/// A procedure as `procedure_info` (or a `search_procedures` item) describes it.
fn full_sighting<'a>(
    evidence: &'a str,
    document: &'a str,
    procedure: Procedure<'a>,
) -> Option<ProcedureSighting<'a>> {
    let (address, names) = names_of(procedure, true);
    Some(ProcedureSighting {
        evidence,
        document,
        address: address?,
        names,
        names_complete: true,
    })
}

/// The procedures of a `search_procedures` or `list_procedures` page.
fn procedures<'a>(
    record: &EvidenceRecordView<'a>,
) -> impl Iterator<Item = Procedure<'a>> + use<'a> {
    view::<ProcedurePage<'a>>(record.result)
        .into_iter()
        .flat_map(|page| items(page.procedures))
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
            "procedure_info" => sightings.extend(
                view::<Procedure<'a>>(record.result)
                    .and_then(|info| full_sighting(record.id, document, info)),
            ),
            "search_procedures" => sightings.extend(
                procedures(record).filter_map(|info| full_sighting(record.id, document, info)),
            ),
            "list_procedures" => {
                sightings.extend(procedures(record).filter_map(|entry| {
                    let (address, names) = names_of(entry, false);
                    Some(ProcedureSighting {
                        evidence: record.id,
                        document,
                        address: address?,
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

/// The `cursor` a paged call was given: absent, `null`, a string or something else.
fn cursor_of<'a>(record: &EvidenceRecordView<'a>) -> Present<Option<&'a str>> {
    view::<Paged<'a>>(record.arguments).and_then(|paged| paged.cursor)
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
    // Pages are keyed by their cursor text; a cursor that is not a string counts as none.
    let cursor_text = |record: &EvidenceRecordView<'a>| -> Option<&'a str> {
        match cursor_of(record) {
            Some(Loose::Shaped(cursor)) => cursor,
            _ => None,
        }
    };
    // The listing follows the provider of the oldest first page.
    let provider = pages()
        .find(|record| cursor_text(record).is_none())?
        .provider;
    // The oldest page per cursor (`None` for the first page).
    let mut by_cursor: HashMap<Option<&str>, &EvidenceRecordView<'a>> = HashMap::new();
    for record in pages().filter(|record| record.provider == provider) {
        by_cursor.entry(cursor_text(record)).or_insert(record);
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
        let page = view::<ProcedurePage<'a>>(record.result)?;
        listing
            .addresses
            .extend(items(page.procedures).filter_map(|entry| address_of(entry.address)));
        match page.next_cursor {
            None | Some(Loose::Shaped(None)) => return Some(listing),
            Some(Loose::Shaped(Some(next))) => cursor = Some(next),
            Some(Loose::Other(_)) => return None,
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
            let bytes = view::<Bytes<'a>>(record.result)?;
            Some(ByteSighting {
                evidence: record.id,
                document: document_of(record)?,
                address: address_of(bytes.address)?,
                bytes: decode_hex(bytes.hex.shaped()?)?,
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
                let looks_like_page = view::<Schema<'_>>(record.result)
                    .and_then(|marked| marked.schema.shaped())
                    == Some(INVENTORY_SCHEMA);
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
                let listed = owned::<OccurrenceList>(record.result);
                sightings.extend(
                    listed
                        .into_iter()
                        .flat_map(|list| items(list.occurrences))
                        .map(|occurrence| OccurrenceSighting {
                            evidence: record.id,
                            occurrence_id: occurrence.occurrence_id,
                            sha256: occurrence.sha256,
                            format: occurrence.format.shaped(),
                        }),
                );
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
            let page = view::<CallPage<'a>>(record.result)?;
            let calls = match record.operation {
                "callees" => items(page.callees)
                    // A tail call is a jump, as `disassemble` shows it: not a call here.
                    .filter(|edge| edge.kind.shaped_ref().copied().unwrap_or("call") == "call")
                    .map(|edge| {
                        let procedure = edge.procedure.shaped();
                        let (address, name) = match procedure {
                            Some(procedure) => {
                                (address_of(procedure.address), procedure.name.shaped())
                            }
                            None => (None, None),
                        };
                        CallTarget {
                            address,
                            names: name.into_iter().chain(edge.import.shaped()).collect(),
                        }
                    })
                    .collect(),
                "disassemble" => items(page.instructions)
                    .filter(|instruction| {
                        instruction.target_kind.shaped_ref().copied() == Some("call")
                    })
                    .filter_map(|instruction| {
                        Some(CallTarget {
                            address: Some(address_of(instruction.target)?),
                            names: instruction.target_name.shaped().into_iter().collect(),
                        })
                    })
                    .collect(),
                _ => return None,
            };
            let procedure = page.procedure.shaped()?;
            let first_page = matches!(cursor_of(record), None | Some(Loose::Shaped(None)));
            let last_page = matches!(page.next_cursor, Some(Loose::Shaped(None)));
            let analysed = page
                .analysis
                .shaped()
                .and_then(|analysis| analysis.complete.shaped())
                == Some(true);
            Some(CallView {
                evidence: record.id,
                operation: record.operation,
                document: document_of(record)?,
                caller_address: address_of(procedure.address)?,
                caller_name: procedure.name.shaped(),
                calls,
                complete: first_page && last_page && analysed,
            })
        })
        .collect()
}
