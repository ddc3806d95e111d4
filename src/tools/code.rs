//! Code-analysis tools: `disassemble`, `xrefs_to`, `callers`, `callees` and `decompile`. Each
//! is an observation (its result is recorded as Evidence) backed by a provider operation a
//! provider may not support; the native provider computes one analysis per document on first
//! use and every result says, under `analysis`, whether a bound cut that analysis short.
//! `decompile` (an external provider such as `angr`) records decompiler output, marked as a
//! reconstruction.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::arguments::{ADDRESS_PATTERN, ArgumentError, CursorArgument, TargetArguments, address};
use super::definition::ToolAnnotations;
use super::outcome::ToolError;
use super::spec::{Handler, ToolSpec};
use crate::core::MAX_VALUE_CHARS;
use crate::session::{
    Address, AnalysisStatus, CallEdge, CallGraph, CodeScope, DEFAULT_DECOMPILE_CHARS,
    DEFAULT_DECOMPILE_TIME, Decompilation, DecompileBound, DecompileNames, Disassembly,
    MAX_CODE_PAGE, MAX_DECOMPILE_CHARS, MAX_DECOMPILE_TIME, MAX_DISASSEMBLY_BYTES, NamedAddress,
    Operation, Provider, ProviderError, References, Target,
};

/// Default number of entries in one page of a code-analysis result.
const DEFAULT_CODE_PAGE: u64 = 200;

/// Default byte count of an address range to disassemble.
const DEFAULT_RANGE_BYTES: u64 = 256;

fn default_code_page() -> u64 {
    DEFAULT_CODE_PAGE
}

fn default_decompile_secs() -> u64 {
    DEFAULT_DECOMPILE_TIME.as_secs()
}

fn default_decompile_chars() -> u64 {
    DEFAULT_DECOMPILE_CHARS as u64
}

/// The arguments `disassemble` takes exactly one of.
const DISASSEMBLY_SCOPES: &[&str] = &["procedure", "address"];

/// The arguments of `disassemble`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct DisassembleArguments {
    /// Start address (`0x` and lowercase hexadecimal) or unique name (display or raw) of the
    /// procedure.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    procedure: Option<String>,
    /// First address of a range to decode (`0x` and lowercase hexadecimal), instead of a
    /// procedure.
    #[serde(default, deserialize_with = "address::option")]
    #[schemars(with = "String", regex(pattern = ADDRESS_PATTERN))]
    address: Option<Address>,
    /// Bytes of the range from `address` (1 to 65536, default 256).
    #[schemars(range(min = 1, max = MAX_DISASSEMBLY_BYTES), extend("default" = DEFAULT_RANGE_BYTES))]
    length: Option<u64>,
    #[serde(flatten)]
    page: CursorArgument,
    /// Most entries in the page (1 to 1000, default 200).
    #[serde(default = "default_code_page")]
    #[schemars(range(min = 1, max = MAX_CODE_PAGE))]
    limit: u64,
    // Read by the ToolBox, which picks the target before the handler runs.
    #[serde(flatten)]
    #[allow(dead_code)]
    target: TargetArguments,
}

/// The arguments of `xrefs_to`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct XrefsToArguments {
    /// The referenced address (`0x` and lowercase hexadecimal).
    #[serde(with = "address")]
    #[schemars(with = "String", regex(pattern = ADDRESS_PATTERN))]
    address: Address,
    #[serde(flatten)]
    page: CursorArgument,
    /// Most entries in the page (1 to 1000, default 200).
    #[serde(default = "default_code_page")]
    #[schemars(range(min = 1, max = MAX_CODE_PAGE))]
    limit: u64,
    // Read by the ToolBox, which picks the target before the handler runs.
    #[serde(flatten)]
    #[allow(dead_code)]
    target: TargetArguments,
}

/// The arguments of `callers` and `callees`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct CallGraphArguments {
    /// Start address (`0x` and lowercase hexadecimal) or unique name (display or raw) of the
    /// procedure.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    procedure: String,
    #[serde(flatten)]
    page: CursorArgument,
    /// Most entries in the page (1 to 1000, default 200).
    #[serde(default = "default_code_page")]
    #[schemars(range(min = 1, max = MAX_CODE_PAGE))]
    limit: u64,
    // Read by the ToolBox, which picks the target before the handler runs.
    #[serde(flatten)]
    #[allow(dead_code)]
    target: TargetArguments,
}

/// The arguments of `decompile`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct DecompileArguments {
    /// Start address (`0x` and lowercase hexadecimal) or unique name (display or raw) of the
    /// procedure.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    procedure: String,
    /// Most seconds the decompiler may take (1 to 300, default 30); a bound that cuts it gives
    /// `complete: false`.
    #[serde(default = "default_decompile_secs")]
    #[schemars(range(min = 1, max = MAX_DECOMPILE_TIME.as_secs()))]
    timeout_secs: u64,
    /// Most characters of pseudo-C returned (1 to 100000, default 40000); longer output is cut
    /// and marked `complete: false`.
    #[serde(default = "default_decompile_chars")]
    #[schemars(range(min = 1, max = MAX_DECOMPILE_CHARS))]
    max_chars: u64,
    // Read by the ToolBox, which picks the target before the handler runs.
    #[serde(flatten)]
    #[allow(dead_code)]
    target: TargetArguments,
}

/// What every `decompile` record says it is, so a reader of the ledger never takes it for an
/// observation.
pub const DECOMPILER_OUTPUT: &str = "decompiler_output";

/// The note every `decompile` result carries.
const RECONSTRUCTION_NOTE: &str = "Pseudo-C is a decompiler's reconstruction, not an \
    observation: claims about behaviour rest on disassembly or captures; pseudo-C supports \
    inferences only.";

/// The code-analysis tools, in catalog order.
pub(super) fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "disassemble",
            title: "Disassemble",
            description: "The instructions of a procedure (up to the next procedure start, the \
            end of its section or its known size) or of an address range of at most 65536 \
            bytes: address, bytes, mnemonic, operands (Intel syntax on x86) and the resolved \
            target of calls, branches and PC-relative operands with the procedure, stub \
            (`printf@plt`) or import it names. Give `procedure`, or `address` and `length`. \
            Paged: pass `next_cursor` back as `cursor`. Records Evidence.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::observe(Operation::Disassemble, disassemble),
        },
        ToolSpec {
            name: "xrefs_to",
            title: "References to an address",
            description: "Who refers to an address: calls, jumps and data references (RIP-relative \
            operands, adrp+add/ldr pairs, absolute operands, pointers in data sections), each \
            with the referring procedure and segment, in address order. A string address from \
            search_strings leads to the procedures that use it. Paged. Records Evidence.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::observe(Operation::XrefsTo, xrefs_to),
        },
        ToolSpec {
            name: "callers",
            title: "Callers of a procedure",
            description: "The procedures with a direct call or tail call to a procedure (or to a \
            stub such as `printf@plt`, given by address), each with its call sites and `kind` \
            (`call` or `tail_call`), in address order. Paged. Records Evidence.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::observe(Operation::Callers, callers),
        },
        ToolSpec {
            name: "callees",
            title: "Callees of a procedure",
            description: "What a procedure calls directly, each with its call sites and `kind` \
            (`call`, or `tail_call` for an unconditional jump to the start of another \
            procedure), in address order; calls through PLT stubs, PE import thunks, Mach-O \
            stubs and import slots are named by the imported symbol (`import`). Paged. Records \
            Evidence.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::observe(Operation::Callees, callees),
        },
        ToolSpec {
            name: "decompile",
            title: "Decompile a procedure",
            description: "Pseudo-C of one procedure from a provider with a decompiler (`angr` \
            with `rea serve --provider angr`): the code, the decompiler's warnings and errors \
            verbatim, and `complete: false` with the reason when structuring failed, the time \
            bound (`timeout_secs`, default 30, at most 300) stopped it, or the output was cut \
            to `max_chars`. Pseudo-C is a reconstruction: base claims about behaviour on \
            disassemble or captures. Records Evidence marked `decompiler_output`.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::observe(Operation::Decompile, decompile),
        },
    ]
}

fn decompile(target: &Target, arguments: DecompileArguments) -> Result<DecompileResult, ToolError> {
    let procedure = target.resolve_procedure(&arguments.procedure)?;
    let bound = DecompileBound::new(
        std::time::Duration::from_secs(arguments.timeout_secs),
        usize::try_from(arguments.max_chars).unwrap_or(MAX_DECOMPILE_CHARS),
    );
    // The investigator's labels replace the decompiler's names (docs/CONTRACT.md section 17).
    let names =
        DecompileNames::new(target.labels().filter_map(|(address, label)| {
            Some((Address::parse(address).ok()?, label.to_owned()))
        }));
    let decompilation = target.query_document(|provider, document| {
        provider.decompile(document, procedure, bound, &names)
    })?;
    Ok(DecompileResult {
        document: target.document()?.to_owned(),
        evidence_kind: DECOMPILER_OUTPUT,
        note: RECONSTRUCTION_NOTE,
        decompilation,
    })
}

/// The result of `decompile`.
#[derive(Serialize, JsonSchema)]
pub(super) struct DecompileResult {
    /// The document.
    document: String,
    /// Always `decompiler_output`: the record is a reconstruction, not an observation.
    #[schemars(extend("enum" = [DECOMPILER_OUTPUT]))]
    evidence_kind: &'static str,
    /// What pseudo-C may and may not support.
    note: &'static str,
    #[serde(flatten)]
    decompilation: Decompilation,
}

fn page_limit(limit: u64) -> usize {
    usize::try_from(limit).unwrap_or(MAX_CODE_PAGE)
}

fn disassemble(
    target: &Target,
    arguments: DisassembleArguments,
) -> Result<DisassembleResult, ToolError> {
    let scope = match (arguments.procedure.as_deref(), arguments.address) {
        (Some(procedure), None) => {
            if arguments.length.is_some() {
                return Err(ArgumentError::Requires {
                    tool: "disassemble",
                    argument: "length",
                    requires: "address",
                }
                .into());
            }
            CodeScope::Procedure(target.resolve_procedure(procedure)?)
        }
        (None, Some(start)) => CodeScope::Range {
            start,
            length: arguments.length.unwrap_or(DEFAULT_RANGE_BYTES),
        },
        _ => {
            return Err(ArgumentError::OneOf {
                tool: "disassemble",
                arguments: DISASSEMBLY_SCOPES,
            }
            .into());
        }
    };
    let limit = page_limit(arguments.limit);
    let disassembly = target.query_document(|provider, document| {
        provider.disassemble(document, scope, arguments.page.cursor.as_deref(), limit)
    })?;
    Ok(DisassembleResult {
        document: target.document()?.to_owned(),
        disassembly,
    })
}

/// The result of `disassemble`.
#[derive(Serialize, JsonSchema)]
pub(super) struct DisassembleResult {
    /// The document.
    document: String,
    #[serde(flatten)]
    disassembly: Disassembly,
}

fn xrefs_to(target: &Target, arguments: XrefsToArguments) -> Result<XrefsToResult, ToolError> {
    let limit = page_limit(arguments.limit);
    let references = target.query_document(|provider, document| {
        provider.xrefs_to(
            document,
            arguments.address,
            arguments.page.cursor.as_deref(),
            limit,
        )
    })?;
    Ok(XrefsToResult {
        document: target.document()?.to_owned(),
        references,
    })
}

/// The result of `xrefs_to`.
#[derive(Serialize, JsonSchema)]
pub(super) struct XrefsToResult {
    /// The document.
    document: String,
    #[serde(flatten)]
    references: References,
}

/// A provider's `callers` or `callees`.
type GraphQuery =
    fn(&dyn Provider, &str, Address, Option<&str>, usize) -> Result<CallGraph, ProviderError>;

fn callers(target: &Target, arguments: CallGraphArguments) -> Result<CallersResult, ToolError> {
    let (page, callers) = call_graph(
        target,
        &arguments,
        |provider, document, at, cursor, limit| provider.callers(document, at, cursor, limit),
    )?;
    Ok(CallersResult { page, callers })
}

fn callees(target: &Target, arguments: CallGraphArguments) -> Result<CalleesResult, ToolError> {
    let (page, callees) = call_graph(
        target,
        &arguments,
        |provider, document, at, cursor, limit| provider.callees(document, at, cursor, limit),
    )?;
    Ok(CalleesResult { page, callees })
}

fn call_graph(
    target: &Target,
    arguments: &CallGraphArguments,
    query: GraphQuery,
) -> Result<(GraphPage, Vec<CallEdge>), ToolError> {
    let procedure = target.resolve_procedure(&arguments.procedure)?;
    let limit = page_limit(arguments.limit);
    let graph = target.query_document(|provider, document| {
        query(
            provider,
            document,
            procedure,
            arguments.page.cursor.as_deref(),
            limit,
        )
    })?;
    let page = GraphPage {
        analysis: graph.analysis,
        document: target.document()?.to_owned(),
        next_cursor: graph.next_cursor,
        procedure: graph.procedure,
        total: graph.total,
    };
    Ok((page, graph.edges))
}

/// What a `callers` or `callees` result holds besides its edges.
#[derive(Serialize, JsonSchema)]
struct GraphPage {
    /// The document's code analysis: when it is not complete, lists may miss entries.
    analysis: AnalysisStatus,
    /// The document.
    document: String,
    /// Cursor of the next page; null on the last page.
    next_cursor: Option<String>,
    /// The procedure asked about.
    procedure: NamedAddress,
    /// Number of edges.
    total: usize,
}

/// The result of `callers`.
#[derive(Serialize, JsonSchema)]
pub(super) struct CallersResult {
    /// This page's callers, in address order.
    callers: Vec<CallEdge>,
    #[serde(flatten)]
    page: GraphPage,
}

/// The result of `callees`.
#[derive(Serialize, JsonSchema)]
pub(super) struct CalleesResult {
    /// This page's callees, in address order.
    callees: Vec<CallEdge>,
    #[serde(flatten)]
    page: GraphPage,
}
