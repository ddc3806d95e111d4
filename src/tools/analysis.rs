//! Static-analysis tools: procedures, segments, strings and bytes of a document. Each is an
//! observation: its result is recorded as Evidence.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::arguments::{ADDRESS_PATTERN, ArgumentError, CursorArgument, TargetArguments, address};
use super::definition::ToolAnnotations;
use super::outcome::ToolError;
use super::spec::{Handler, ToolSpec};
use crate::base::notices::{self, Notice};
use crate::core::{MAX_VALUE_CHARS, PROCEDURE_PAGE_SIZE};
use crate::session::{
    Address, ImportPage, MAX_READ_BYTES, MAX_SEARCH_RESULTS, NameMatch, Operation, ProcedureInfo,
    ProcedureQuery, ReadLength, Segment, StringMatch, StringQuery, Target,
};

/// Default number of results of the two searches.
const DEFAULT_SEARCH_RESULTS: u64 = 100;

fn default_procedure_page() -> u64 {
    PROCEDURE_PAGE_SIZE as u64
}

fn default_search_results() -> u64 {
    DEFAULT_SEARCH_RESULTS
}

fn default_min_chars() -> u64 {
    StringQuery::DEFAULT_MIN_CHARS as u64
}

/// How `search_procedures` compares names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum Matching {
    // The name's matching key contains the query's. (Comments, not doc comments: a
    // documented variant would turn the schema's `enum` into a `oneOf`.)
    #[default]
    Contains,
    // The display or raw name equals the query.
    Exact,
}

/// The arguments of `list_procedures`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct ListProceduresArguments {
    #[serde(flatten)]
    page: CursorArgument,
    /// Most procedures in the page (1 to 500, default 500).
    #[serde(default = "default_procedure_page")]
    #[schemars(range(min = 1, max = PROCEDURE_PAGE_SIZE))]
    limit: u64,
    // Read by the ToolBox, which picks the target before the handler runs.
    #[serde(flatten)]
    #[allow(dead_code)]
    target: TargetArguments,
}

/// The arguments of `procedure_info`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct ProcedureInfoArguments {
    /// Start address (`0x` and lowercase hexadecimal) or unique name (display or raw) of the
    /// procedure.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    procedure: String,
    // Read by the ToolBox, which picks the target before the handler runs.
    #[serde(flatten)]
    #[allow(dead_code)]
    target: TargetArguments,
}

/// The arguments of `search_procedures`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct SearchProceduresArguments {
    /// Text to look for in procedure names.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    query: String,
    /// `contains` (default): the name's matching key contains the query's; `exact`: the
    /// display or raw name equals the query.
    #[serde(default)]
    r#match: Matching,
    /// Most results (1 to 500, default 100).
    #[serde(default = "default_search_results")]
    #[schemars(range(min = 1, max = MAX_SEARCH_RESULTS))]
    limit: u64,
    // Read by the ToolBox, which picks the target before the handler runs.
    #[serde(flatten)]
    #[allow(dead_code)]
    target: TargetArguments,
}

/// The arguments of `list_segments`: the target only.
#[derive(Deserialize, JsonSchema)]
pub(super) struct ListSegmentsArguments {
    // Read by the ToolBox, which picks the target before the handler runs.
    #[serde(flatten)]
    #[allow(dead_code)]
    target: TargetArguments,
}

/// The arguments of `search_strings`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct SearchStringsArguments {
    /// Only strings containing this text; omit for all strings.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    contains: Option<String>,
    /// Shortest string reported, in characters (1 to 256, default 4).
    #[serde(default = "default_min_chars")]
    #[schemars(range(min = 1, max = 256))]
    min_chars: u64,
    /// Most results (1 to 500, default 100).
    #[serde(default = "default_search_results")]
    #[schemars(range(min = 1, max = MAX_SEARCH_RESULTS))]
    limit: u64,
    // Read by the ToolBox, which picks the target before the handler runs.
    #[serde(flatten)]
    #[allow(dead_code)]
    target: TargetArguments,
}

/// The arguments of `read_bytes`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct ReadBytesArguments {
    /// Address of the first byte (`0x` and lowercase hexadecimal).
    #[serde(with = "address")]
    #[schemars(with = "String", regex(pattern = ADDRESS_PATTERN))]
    address: Address,
    /// Number of bytes to read (1 to 4096).
    #[schemars(range(min = 1, max = MAX_READ_BYTES))]
    length: u64,
    // Read by the ToolBox, which picks the target before the handler runs.
    #[serde(flatten)]
    #[allow(dead_code)]
    target: TargetArguments,
}

/// The arguments of `list_imports`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct ListImportsArguments {
    #[serde(flatten)]
    page: CursorArgument,
    /// Most imports in the page (1 to 500, default 500).
    #[serde(default = "default_procedure_page")]
    #[schemars(range(min = 1, max = PROCEDURE_PAGE_SIZE))]
    limit: u64,
    // Read by the ToolBox, which picks the target before the handler runs.
    #[serde(flatten)]
    #[allow(dead_code)]
    target: TargetArguments,
}

/// The static-analysis tools, in catalog order.
pub(super) fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "list_procedures",
            title: "List procedures",
            description: "One page of the procedures of a document, one per start address in \
            address order, with the primary name when one is known and the other names at \
            the address (`aliases`, absent when there are none). Pass `next_cursor` back \
            as `cursor` for the next page; it is null on the last page. Records Evidence.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::observe(Operation::ListProcedures, list_procedures),
        },
        ToolSpec {
            name: "procedure_info",
            title: "Describe a procedure",
            description: "What the provider knows about one procedure: address, name (display and \
            raw), other names at the address, size, segment and where it was found. The \
            procedure is an address or a unique name; an ambiguous name is an error listing \
            the candidate addresses. Records Evidence.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::observe(Operation::ProcedureInfo, procedure_info),
        },
        ToolSpec {
            name: "search_procedures",
            title: "Search procedures by name",
            description: "Procedures whose display or raw name contains the query (compared by \
            the Unicode-normalized, case-folded matching key) or equals it exactly, in \
            address order. Records Evidence.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::observe(Operation::SearchProcedures, search_procedures),
        },
        ToolSpec {
            name: "list_segments",
            title: "List segments",
            description: "The mapped regions (sections, or segments when there are no sections) \
            of a document in address order, with size, file extent and permissions. Records \
            Evidence.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::observe(Operation::ListSegments, list_segments),
        },
        ToolSpec {
            name: "search_strings",
            title: "Search strings",
            description: "Printable strings in the non-code, file-backed regions of a document, \
            in address order, optionally only those containing a text (compared by the \
            matching key). Records Evidence.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::observe(Operation::SearchStrings, search_strings),
        },
        ToolSpec {
            name: "read_bytes",
            title: "Read bytes",
            description: "Read up to 4096 bytes of a document starting at an address, as \
            hexadecimal. Fewer bytes come back when the file-backed region ends first. \
            Records Evidence.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::observe(Operation::ReadBytes, read_bytes),
        },
        ToolSpec {
            name: "list_imports",
            title: "List imports",
            description: "One page of the imported symbols of a document, in the format's order: \
            name (display and raw), the library where the format says it (ELF version \
            requirement, PE import descriptor, Mach-O dylib ordinal), the ELF symbol version, \
            and the stub the code calls (PLT entry, import thunk, Mach-O stub) and the slot it \
            reads (GOT, IAT, lazy pointer) when known. Pass `next_cursor` back as `cursor` for \
            the next page; it is null on the last page. Records Evidence.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::observe(Operation::ListImports, list_imports),
        },
    ]
}

fn list_imports(
    target: &Target,
    arguments: ListImportsArguments,
) -> Result<ListImportsResult, ToolError> {
    let limit = usize::try_from(arguments.limit).unwrap_or(PROCEDURE_PAGE_SIZE);
    let page = target.query_document(|provider, document| {
        provider.list_imports(document, arguments.page.cursor.as_deref(), limit)
    })?;
    Ok(ListImportsResult {
        document: target.document()?.to_owned(),
        page,
    })
}

/// The result of `list_imports`.
#[derive(Serialize, JsonSchema)]
pub(super) struct ListImportsResult {
    /// The document listed.
    document: String,
    // `imports` and `next_cursor`.
    #[serde(flatten)]
    page: ImportPage,
}

fn list_procedures(
    target: &Target,
    arguments: ListProceduresArguments,
) -> Result<ListProceduresResult, ToolError> {
    let limit = usize::try_from(arguments.limit).unwrap_or(PROCEDURE_PAGE_SIZE);
    let page = target.query_document(|provider, document| {
        provider.list_procedures(document, arguments.page.cursor.as_deref(), limit)
    })?;
    Ok(ListProceduresResult {
        document: target.document()?.to_owned(),
        procedures: page
            .entries
            .into_iter()
            .map(|entry| ListedProcedure {
                address: entry.address,
                name: entry.name,
                aliases: entry.aliases,
                label: None,
            })
            .collect(),
        next_cursor: page.next_cursor,
    })
}

/// The result of `list_procedures`.
#[derive(Serialize, JsonSchema)]
pub(super) struct ListProceduresResult {
    /// The document listed.
    document: String,
    /// Cursor of the next page; null on the last page.
    next_cursor: Option<String>,
    /// This page's procedures, in the provider's stable order.
    procedures: Vec<ListedProcedure>,
}

/// One procedure of a `list_procedures` page.
#[derive(Serialize, JsonSchema)]
struct ListedProcedure {
    /// Start address, lowercase `0x`-prefixed hexadecimal.
    address: String,
    /// The primary name, or null when none is known.
    name: Option<String>,
    /// Other names at the same address; absent when none is known.
    // Left out when empty: most addresses have one name, and a page stays small.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    aliases: Vec<String>,
    /// The investigator's name for it (annotate), beside the provider's; absent when none. An
    /// inference backed by the Evidence its annotation cites.
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<String>,
}

fn procedure_info(
    target: &Target,
    arguments: ProcedureInfoArguments,
) -> Result<ProcedureInfoResult, ToolError> {
    let address = target.resolve_procedure(&arguments.procedure)?;
    let info =
        target.query_document(|provider, document| provider.procedure_info(document, address))?;
    Ok(ProcedureInfoResult {
        document: target.document()?.to_owned(),
        label: target.label(&info.address.to_string()),
        info,
    })
}

/// The result of `procedure_info`.
#[derive(Serialize, JsonSchema)]
pub(super) struct ProcedureInfoResult {
    /// The document.
    document: String,
    /// The investigator's name for it (annotate), beside the provider's; null when none. An
    /// inference backed by the Evidence its annotation cites.
    label: Option<String>,
    #[serde(flatten)]
    info: ProcedureInfo,
}

fn search_procedures(
    target: &Target,
    arguments: SearchProceduresArguments,
) -> Result<SearchProceduresResult, ToolError> {
    let matching = match arguments.r#match {
        Matching::Contains => NameMatch::Contains,
        Matching::Exact => NameMatch::Exact,
    };
    let limit = usize::try_from(arguments.limit).unwrap_or(MAX_SEARCH_RESULTS);
    let query = ProcedureQuery::new(&arguments.query, matching).with_limit(limit);
    let found =
        target.query_document(|provider, document| provider.search_procedures(document, &query))?;
    if found.truncated {
        notices::note(Notice::ResultCut {
            tool: "search_procedures",
            limit,
        });
    }
    Ok(SearchProceduresResult {
        document: target.document()?.to_owned(),
        procedures: found.procedures,
        truncated: found.truncated,
    })
}

/// The result of `search_procedures`.
#[derive(Serialize, JsonSchema)]
pub(super) struct SearchProceduresResult {
    /// The document searched.
    document: String,
    /// Matching procedures, in address order.
    procedures: Vec<ProcedureInfo>,
    /// Whether more procedures matched than were returned.
    truncated: bool,
}

fn list_segments(
    target: &Target,
    _: ListSegmentsArguments,
) -> Result<ListSegmentsResult, ToolError> {
    let segments = target.query_document(|provider, document| provider.list_segments(document))?;
    Ok(ListSegmentsResult {
        document: target.document()?.to_owned(),
        segments,
    })
}

/// The result of `list_segments`.
#[derive(Serialize, JsonSchema)]
pub(super) struct ListSegmentsResult {
    /// The document.
    document: String,
    /// Its segments, in address order.
    segments: Vec<Segment>,
}

fn search_strings(
    target: &Target,
    arguments: SearchStringsArguments,
) -> Result<SearchStringsResult, ToolError> {
    let as_usize = |value| usize::try_from(value).unwrap_or(usize::MAX);
    let query = StringQuery::new(arguments.contains.as_deref().unwrap_or_default())
        .with_min_chars(as_usize(arguments.min_chars))
        .with_limit(as_usize(arguments.limit));
    let found =
        target.query_document(|provider, document| provider.search_strings(document, &query))?;
    if found.truncated {
        notices::note(Notice::ResultCut {
            tool: "search_strings",
            limit: as_usize(arguments.limit),
        });
    }
    Ok(SearchStringsResult {
        document: target.document()?.to_owned(),
        strings: found.matches,
        truncated: found.truncated,
    })
}

/// The result of `search_strings`.
#[derive(Serialize, JsonSchema)]
pub(super) struct SearchStringsResult {
    /// The document searched.
    document: String,
    /// Matching strings, in address order.
    strings: Vec<StringMatch>,
    /// Whether the search stopped early (limit or scan bound reached).
    truncated: bool,
}

fn read_bytes(
    target: &Target,
    arguments: ReadBytesArguments,
) -> Result<ReadBytesResult, ToolError> {
    let address = arguments.address;
    let length = ReadLength::new(arguments.length).map_err(|error| ArgumentError::Syntax {
        tool: "read_bytes",
        argument: "length",
        reason: error.to_string(),
    })?;
    let mut bytes = target
        .query_document(|provider, document| provider.read_bytes(document, address, length))?;
    // The bound is the server's promise, whatever an integrator's provider returns.
    bytes.truncate(length.get());
    Ok(ReadBytesResult {
        document: target.document()?.to_owned(),
        address: address.to_string(),
        length: bytes.len(),
        hex: hex(&bytes),
    })
}

/// The result of `read_bytes`.
#[derive(Serialize, JsonSchema)]
pub(super) struct ReadBytesResult {
    /// Address of the first byte, canonical (no leading zeros).
    address: String,
    /// The document read.
    document: String,
    /// The bytes as lowercase hexadecimal, two digits per byte.
    hex: String,
    /// Number of bytes read (fewer than asked when the region ends).
    length: usize,
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(text, "{byte:02x}");
    }
    text
}
