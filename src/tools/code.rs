//! Code-analysis tools: `disassemble`, `xrefs_to`, `callers`, `callees` and `decompile`. Each
//! is an observation (its result is recorded as Evidence) backed by a provider operation a
//! provider may not support; the native provider computes one analysis per document on first
//! use and every result says, under `analysis`, whether a bound cut that analysis short.
//! `decompile` (an external provider such as `angr`) records decompiler output, marked as a
//! reconstruction.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::arguments::{ADDRESS_PATTERN, ArgumentError, CursorArgument, TargetArguments, address};
use super::definition::ToolAnnotations;
use super::outcome::ToolError;
use super::schema::{
    array, count, flag, hand_written, nullable_string, object, string, with_optional_property,
};
use super::spec::{Handler, ToolSpec};
use crate::core::MAX_VALUE_CHARS;
use crate::session::{
    Address, AnalysisStatus, CallEdge, CallGraph, CodeScope, DEFAULT_DECOMPILE_CHARS,
    DEFAULT_DECOMPILE_TIME, Decompilation, DecompileBound, DecompileNames, Disassembly,
    MAX_CODE_PAGE, MAX_DECOMPILE_CHARS, MAX_DECOMPILE_TIME, MAX_DECOMPILE_WARNINGS,
    MAX_DISASSEMBLY_BYTES, NamedAddress, Operation, Provider, ProviderError, References, Target,
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

/// A decompilation, as `decompile` describes it.
impl JsonSchema for Decompilation {
    fn schema_name() -> Cow<'static, str> {
        "Decompilation".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        hand_written({
            object(json!({
                "procedure": named_address("The procedure decompiled."),
                "decompiler": string("The decompiler and its version, e.g. `angr 9.2.213`."),
                "code": string("The pseudo-C."),
                "warnings": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_DECOMPILE_WARNINGS, "description": "The decompiler's warnings and errors, verbatim."},
                "complete": flag("Whether `code` is the whole procedure as the decompiler reconstructed it."),
                "incomplete_reason": nullable_string("Why `complete` is false (structuring failed, a bound stopped it, the output was cut); null when complete."),
            }))
        })
    }
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

/// A page of disassembly, as `disassemble` describes it.
impl JsonSchema for Disassembly {
    fn schema_name() -> Cow<'static, str> {
        "Disassembly".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        hand_written({
            let instruction = object(json!({
                "address": string("Address of the instruction."),
                "bytes": string("Its bytes, lowercase hexadecimal."),
                "mnemonic": string("The mnemonic."),
                "operands": string("The operands as text."),
                "target": nullable_string("Address it calls, branches to or refers to PC-relatively, or null."),
                "target_kind": {
                    "description": "How it refers to `target` (null without one).",
                    "anyOf": [reference_kind("Reference kind."), {"type": "null"}],
                },
                "target_name": nullable_string("What is at `target`: a procedure, `name+0x10`, a `symbol@plt` stub or an imported symbol; null when unknown."),
            }));
            let instruction = with_optional_property(
                instruction,
                "target_label",
                super::annotations::labels::target_label_schema(),
            );
            object(json!({
                "architecture": string("The decoded architecture (`x86_64`, `i386`, `aarch64`)."),
                "procedure": nullable(named_address("The procedure."), "The procedure decoded, or null for an address range."),
                "start": string("First address of the procedure or range."),
                "end": string("End of the procedure or range (exclusive)."),
                "instructions": array(instruction, "This page's instructions, in address order."),
                "next_cursor": nullable_string("Cursor of the next page; null on the last page."),
                "analysis": analysis_schema(),
            }))
        })
    }
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

/// A page of references, as `xrefs_to` describes it.
impl JsonSchema for References {
    fn schema_name() -> Cow<'static, str> {
        "References".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        hand_written({
            let reference = object(json!({
                "from": string("The referring instruction, or the data word holding the pointer."),
                "kind": reference_kind("`call`, `jump` or `data`."),
                "procedure": nullable(named_address("The procedure."), "The procedure containing `from`, or null."),
                "segment": nullable_string("The segment containing `from`."),
            }));
            object(json!({
                "target": named_address("The referenced address and what is there."),
                "references": array(reference, "This page's references, by referring address."),
                "total": count("Number of references to the address."),
                "next_cursor": nullable_string("Cursor of the next page; null on the last page."),
                "analysis": analysis_schema(),
            }))
        })
    }
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

fn named_address(description: &str) -> Value {
    let mut schema = with_optional_property(
        object(json!({
            "address": string("The address, lowercase `0x`-prefixed hexadecimal."),
            "name": nullable_string("What is there: a procedure, `symbol@plt` stub or imported symbol name; null when unknown."),
        })),
        "label",
        super::annotations::labels::label_schema(),
    );
    schema["description"] = json!(description);
    schema
}

fn nullable(schema: Value, description: &str) -> Value {
    json!({"description": description, "anyOf": [schema, {"type": "null"}]})
}

fn reference_kind(description: &str) -> Value {
    json!({"type": "string", "enum": ["call", "jump", "data"], "description": description})
}

fn analysis_schema() -> Value {
    let mut schema = object(json!({
        "complete": flag("Whether every procedure was decoded and every reference kept."),
        "cut_short_by": {
            "description": "The bound that cut the analysis short (most instructions, most references, most time), or null.",
            "anyOf": [{"type": "string", "enum": ["instructions", "references", "time"]}, {"type": "null"}],
        },
        "instructions": count("Instructions the analysis decoded."),
        "references": count("References the analysis kept."),
    }));
    schema["description"] =
        json!("The document's code analysis: when it is not complete, lists may miss entries.");
    schema
}

/// A call-graph edge, as `callers` and `callees` describe it.
impl JsonSchema for CallEdge {
    fn schema_name() -> Cow<'static, str> {
        "CallEdge".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        hand_written(object(json!({
            "procedure": named_address("The caller or callee."),
            "import": nullable_string("The imported symbol when the callee is a stub (PLT entry, PE import thunk, Mach-O stub) or an import slot."),
            "kind": {"type": "string", "enum": ["call", "tail_call"], "description": "`call` for call instructions; `tail_call` for unconditional jumps from inside the caller to the start of the callee (another procedure, a stub or an import slot)."},
            "call_sites": array(string("Address of a call instruction, or of a tail-call jump."), "The calls (or tail-call jumps) of this edge, in address order."),
        })))
    }
}

/// An address and what is there.
impl JsonSchema for NamedAddress {
    fn schema_name() -> Cow<'static, str> {
        "NamedAddress".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut schema = named_address("");
        if let Some(object) = schema.as_object_mut() {
            object.remove("description");
        }
        hand_written(schema)
    }
}

/// The state of a document's code analysis.
impl JsonSchema for AnalysisStatus {
    fn schema_name() -> Cow<'static, str> {
        "AnalysisStatus".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        hand_written(analysis_schema())
    }
}
