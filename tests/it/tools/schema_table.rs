//! Every argument of every tool, as `tools/list` published it before the schemas were derived
//! from the argument types: name, JSON type, bounds (length, range, items), pattern, enum,
//! default, whether it is required, and its description. The table was written from the
//! hand-built catalog, so a derived schema that loses a bound, an option or a description
//! fails here.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::tools::closed;
use serde_json::Value;

/// `(tool, argument, required, schema without its description, description)`.
const TABLE: &[(&str, &str, bool, &str, &str)] = &[
    (
        "open_binary",
        "path",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Path of the binary or catalog file on the server's machine (absolute, or relative to the server's working directory).",
    ),
    (
        "open_binary",
        "new_session",
        false,
        r#"{"default":false,"type":"boolean"}"#,
        "Open in a new session even when a session resumed from the store (kept from before a restart) serves the same file with the same SHA-256; by default that session is resumed (`resumed: true`).",
    ),
    (
        "open_binary",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "close_binary",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "list_sessions",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "list_providers",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "list_documents",
        "cursor",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The `next_cursor` of the previous page; omit for the first page.",
    ),
    (
        "list_documents",
        "limit",
        false,
        r#"{"default":100,"maximum":500,"minimum":1,"type":"integer"}"#,
        "Most documents in the page (1 to 500, default 100).",
    ),
    (
        "list_documents",
        "provider",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Identity of a declared provider (see list_providers); default: the current provider.",
    ),
    (
        "list_documents",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "current_document",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "set_current_document",
        "document",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Name of the document to make current (see list_documents).",
    ),
    (
        "set_current_document",
        "provider",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Identity of a declared provider (see list_providers); default: the current provider.",
    ),
    (
        "set_current_document",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "list_procedures",
        "cursor",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The `next_cursor` of the previous page; omit for the first page.",
    ),
    (
        "list_procedures",
        "document",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Name of a document of the provider (see list_documents); default: the current document.",
    ),
    (
        "list_procedures",
        "limit",
        false,
        r#"{"default":500,"maximum":500,"minimum":1,"type":"integer"}"#,
        "Most procedures in the page (1 to 500, default 500).",
    ),
    (
        "list_procedures",
        "provider",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Identity of a declared provider (see list_providers); default: the current provider.",
    ),
    (
        "list_procedures",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "procedure_info",
        "document",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Name of a document of the provider (see list_documents); default: the current document.",
    ),
    (
        "procedure_info",
        "procedure",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Start address (`0x` and lowercase hexadecimal) or unique name (display or raw) of the procedure.",
    ),
    (
        "procedure_info",
        "provider",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Identity of a declared provider (see list_providers); default: the current provider.",
    ),
    (
        "procedure_info",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "search_procedures",
        "document",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Name of a document of the provider (see list_documents); default: the current document.",
    ),
    (
        "search_procedures",
        "limit",
        false,
        r#"{"default":100,"maximum":500,"minimum":1,"type":"integer"}"#,
        "Most results (1 to 500, default 100).",
    ),
    (
        "search_procedures",
        "match",
        false,
        r#"{"default":"contains","enum":["contains","exact"],"type":"string"}"#,
        "`contains` (default): the name's matching key contains the query's; `exact`: the display or raw name equals the query.",
    ),
    (
        "search_procedures",
        "provider",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Identity of a declared provider (see list_providers); default: the current provider.",
    ),
    (
        "search_procedures",
        "query",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Text to look for in procedure names.",
    ),
    (
        "search_procedures",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "list_segments",
        "document",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Name of a document of the provider (see list_documents); default: the current document.",
    ),
    (
        "list_segments",
        "provider",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Identity of a declared provider (see list_providers); default: the current provider.",
    ),
    (
        "list_segments",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "search_strings",
        "contains",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Only strings containing this text; omit for all strings.",
    ),
    (
        "search_strings",
        "document",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Name of a document of the provider (see list_documents); default: the current document.",
    ),
    (
        "search_strings",
        "limit",
        false,
        r#"{"default":100,"maximum":500,"minimum":1,"type":"integer"}"#,
        "Most results (1 to 500, default 100).",
    ),
    (
        "search_strings",
        "min_chars",
        false,
        r#"{"default":4,"maximum":256,"minimum":1,"type":"integer"}"#,
        "Shortest string reported, in characters (1 to 256, default 4).",
    ),
    (
        "search_strings",
        "provider",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Identity of a declared provider (see list_providers); default: the current provider.",
    ),
    (
        "search_strings",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "read_bytes",
        "address",
        true,
        r#"{"pattern":"^0x[0-9a-f]{1,16}$","type":"string"}"#,
        "Address of the first byte (`0x` and lowercase hexadecimal).",
    ),
    (
        "read_bytes",
        "document",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Name of a document of the provider (see list_documents); default: the current document.",
    ),
    (
        "read_bytes",
        "length",
        true,
        r#"{"maximum":4096,"minimum":1,"type":"integer"}"#,
        "Number of bytes to read (1 to 4096).",
    ),
    (
        "read_bytes",
        "provider",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Identity of a declared provider (see list_providers); default: the current provider.",
    ),
    (
        "read_bytes",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "list_imports",
        "cursor",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The `next_cursor` of the previous page; omit for the first page.",
    ),
    (
        "list_imports",
        "document",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Name of a document of the provider (see list_documents); default: the current document.",
    ),
    (
        "list_imports",
        "limit",
        false,
        r#"{"default":500,"maximum":500,"minimum":1,"type":"integer"}"#,
        "Most imports in the page (1 to 500, default 500).",
    ),
    (
        "list_imports",
        "provider",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Identity of a declared provider (see list_providers); default: the current provider.",
    ),
    (
        "list_imports",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "disassemble",
        "address",
        false,
        r#"{"pattern":"^0x[0-9a-f]{1,16}$","type":"string"}"#,
        "First address of a range to decode (`0x` and lowercase hexadecimal), instead of a procedure.",
    ),
    (
        "disassemble",
        "cursor",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The `next_cursor` of the previous page; omit for the first page.",
    ),
    (
        "disassemble",
        "document",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Name of a document of the provider (see list_documents); default: the current document.",
    ),
    (
        "disassemble",
        "length",
        false,
        r#"{"default":256,"maximum":65536,"minimum":1,"type":"integer"}"#,
        "Bytes of the range from `address` (1 to 65536, default 256).",
    ),
    (
        "disassemble",
        "limit",
        false,
        r#"{"default":200,"maximum":1000,"minimum":1,"type":"integer"}"#,
        "Most entries in the page (1 to 1000, default 200).",
    ),
    (
        "disassemble",
        "procedure",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Start address (`0x` and lowercase hexadecimal) or unique name (display or raw) of the procedure.",
    ),
    (
        "disassemble",
        "provider",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Identity of a declared provider (see list_providers); default: the current provider.",
    ),
    (
        "disassemble",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "xrefs_to",
        "address",
        true,
        r#"{"pattern":"^0x[0-9a-f]{1,16}$","type":"string"}"#,
        "The referenced address (`0x` and lowercase hexadecimal).",
    ),
    (
        "xrefs_to",
        "cursor",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The `next_cursor` of the previous page; omit for the first page.",
    ),
    (
        "xrefs_to",
        "document",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Name of a document of the provider (see list_documents); default: the current document.",
    ),
    (
        "xrefs_to",
        "limit",
        false,
        r#"{"default":200,"maximum":1000,"minimum":1,"type":"integer"}"#,
        "Most entries in the page (1 to 1000, default 200).",
    ),
    (
        "xrefs_to",
        "provider",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Identity of a declared provider (see list_providers); default: the current provider.",
    ),
    (
        "xrefs_to",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "callers",
        "cursor",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The `next_cursor` of the previous page; omit for the first page.",
    ),
    (
        "callers",
        "document",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Name of a document of the provider (see list_documents); default: the current document.",
    ),
    (
        "callers",
        "limit",
        false,
        r#"{"default":200,"maximum":1000,"minimum":1,"type":"integer"}"#,
        "Most entries in the page (1 to 1000, default 200).",
    ),
    (
        "callers",
        "procedure",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Start address (`0x` and lowercase hexadecimal) or unique name (display or raw) of the procedure.",
    ),
    (
        "callers",
        "provider",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Identity of a declared provider (see list_providers); default: the current provider.",
    ),
    (
        "callers",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "callees",
        "cursor",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The `next_cursor` of the previous page; omit for the first page.",
    ),
    (
        "callees",
        "document",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Name of a document of the provider (see list_documents); default: the current document.",
    ),
    (
        "callees",
        "limit",
        false,
        r#"{"default":200,"maximum":1000,"minimum":1,"type":"integer"}"#,
        "Most entries in the page (1 to 1000, default 200).",
    ),
    (
        "callees",
        "procedure",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Start address (`0x` and lowercase hexadecimal) or unique name (display or raw) of the procedure.",
    ),
    (
        "callees",
        "provider",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Identity of a declared provider (see list_providers); default: the current provider.",
    ),
    (
        "callees",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "decompile",
        "document",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Name of a document of the provider (see list_documents); default: the current document.",
    ),
    (
        "decompile",
        "max_chars",
        false,
        r#"{"default":40000,"maximum":100000,"minimum":1,"type":"integer"}"#,
        "Most characters of pseudo-C returned (1 to 100000, default 40000); longer output is cut and marked `complete: false`.",
    ),
    (
        "decompile",
        "procedure",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Start address (`0x` and lowercase hexadecimal) or unique name (display or raw) of the procedure.",
    ),
    (
        "decompile",
        "provider",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Identity of a declared provider (see list_providers); default: the current provider.",
    ),
    (
        "decompile",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "decompile",
        "timeout_secs",
        false,
        r#"{"default":30,"maximum":300,"minimum":1,"type":"integer"}"#,
        "Most seconds the decompiler may take (1 to 300, default 30); a bound that cuts it gives `complete: false`.",
    ),
    (
        "list_evidence",
        "cursor",
        false,
        r#"{"pattern":"^ev-[0-9]{12}$","type":"string"}"#,
        "The `next_cursor` of the previous page (an Evidence ID); omit for the first page.",
    ),
    (
        "list_evidence",
        "limit",
        false,
        r#"{"default":50,"maximum":100,"minimum":1,"type":"integer"}"#,
        "Most records in the page (1 to 100, default 50).",
    ),
    (
        "list_evidence",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "get_evidence",
        "id",
        true,
        r#"{"pattern":"^ev-[0-9]{12}$","type":"string"}"#,
        "The Evidence ID, e.g. `ev-000000000042`.",
    ),
    (
        "get_evidence",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "register_unknown",
        "document",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The document the question concerns, if any.",
    ),
    (
        "register_unknown",
        "procedure",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The procedure (address or name) the question concerns, if any.",
    ),
    (
        "register_unknown",
        "question",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The open question, e.g. `What does 0x401000 decrypt?` (1 to 4,096 characters).",
    ),
    (
        "register_unknown",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "refine_unknown",
        "document",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The document the question concerns, if any.",
    ),
    (
        "refine_unknown",
        "id",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The ID of the current head of a residual unknown, e.g. `unk-000000000003`.",
    ),
    (
        "refine_unknown",
        "procedure",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The procedure (address or name) the question concerns, if any.",
    ),
    (
        "refine_unknown",
        "question",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The open question, e.g. `What does 0x401000 decrypt?` (1 to 4,096 characters).",
    ),
    (
        "refine_unknown",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "resolve_unknown",
        "evidence",
        true,
        r#"{"items":{"pattern":"^ev-[0-9]{12}$","type":"string"},"maxItems":100,"minItems":1,"type":"array"}"#,
        "Evidence IDs that answer the question (1 to 100).",
    ),
    (
        "resolve_unknown",
        "id",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The ID of the current head of a residual unknown, e.g. `unk-000000000003`.",
    ),
    (
        "resolve_unknown",
        "note",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "A short answer, if any.",
    ),
    (
        "resolve_unknown",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "list_unknowns",
        "cursor",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The `next_cursor` of the previous page (an unknown ID); omit for the first page.",
    ),
    (
        "list_unknowns",
        "document",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The document the question concerns, if any.",
    ),
    (
        "list_unknowns",
        "limit",
        false,
        r#"{"default":50,"maximum":100,"minimum":1,"type":"integer"}"#,
        "Most unknowns in the page (1 to 100, default 50).",
    ),
    (
        "list_unknowns",
        "procedure",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The procedure (address or name) the question concerns, if any.",
    ),
    (
        "list_unknowns",
        "revisions",
        false,
        r#"{"default":"heads","enum":["heads","all"],"type":"string"}"#,
        "Current heads only, or every revision.",
    ),
    (
        "list_unknowns",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "list_unknowns",
        "status",
        false,
        r#"{"default":"all","enum":["all","open","resolved"],"type":"string"}"#,
        "Which statuses to list.",
    ),
    (
        "inventory_artifacts",
        "manifest_id",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "For a later page: the manifest ID of page 0, so the page comes from that same walk of `path` (kept by the server) instead of a new one. It must name a walk of this `path`.",
    ),
    (
        "inventory_artifacts",
        "page",
        false,
        r#"{"default":0,"maximum":1000000,"minimum":0,"type":"integer"}"#,
        "Page index, from 0 (default 0).",
    ),
    (
        "inventory_artifacts",
        "page_size",
        false,
        r#"{"default":200,"maximum":1000,"minimum":1,"type":"integer"}"#,
        "Most occurrences per page (1 to 1000, default 200).",
    ),
    (
        "inventory_artifacts",
        "path",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Path of the directory or zip archive on the server's machine.",
    ),
    (
        "inventory_artifacts",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "list_artifact_occurrences",
        "format",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Only occurrences of this format: elf, mach-o, mach-o-fat, pe, zip, wasm, java-class, ar, script or unknown.",
    ),
    (
        "list_artifact_occurrences",
        "manifest_id",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "A manifest ID of a retained inventory (see inventory_artifacts).",
    ),
    (
        "list_artifact_occurrences",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "list_artifact_occurrences",
        "under",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "Only occurrences at this path or below it (whole components).",
    ),
    (
        "compare_inventories",
        "after",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "A manifest ID of a retained inventory (see inventory_artifacts).",
    ),
    (
        "compare_inventories",
        "before",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "A manifest ID of a retained inventory (see inventory_artifacts).",
    ),
    (
        "compare_inventories",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "import_process_capture",
        "capture",
        true,
        r#"{"type":"object"}"#,
        r#"The capture document, a JSON object with `schema: "rea.process-capture"` and `version: 4`."#,
    ),
    (
        "import_process_capture",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "run_process_capture",
        "arguments",
        false,
        r#"{"default":[],"items":{"maxLength":4096,"type":"string"},"maxItems":64,"type":"array"}"#,
        "Arguments after the program's name (at most 64, each at most 4,096 characters).",
    ),
    (
        "run_process_capture",
        "environment",
        false,
        r#"{"default":{},"type":"object"}"#,
        "Explicit variables, name to string value (at most 64); nothing else is inherited.",
    ),
    (
        "run_process_capture",
        "inherit_environment",
        false,
        r#"{"default":[],"items":{"type":"string"},"maxItems":6,"type":"array"}"#,
        "Names of variables the program inherits from the server's environment, from the allowlist PATH, LANG, LC_ALL, LC_CTYPE, TERM, TZ.",
    ),
    (
        "run_process_capture",
        "max_memory_mib",
        false,
        r#"{"default":512,"maximum":4096,"minimum":16,"type":"integer"}"#,
        "Address space of each process, in MiB (default 512, at most 4,096).",
    ),
    (
        "run_process_capture",
        "max_output_bytes",
        false,
        r#"{"default":65536,"maximum":4194304,"minimum":1,"type":"integer"}"#,
        "Bytes kept per output stream; more ends the run (default 65,536, at most 4 MiB).",
    ),
    (
        "run_process_capture",
        "max_processes",
        false,
        r#"{"default":16,"maximum":256,"minimum":1,"type":"integer"}"#,
        "Processes the program may have at once, itself included (default 16, at most 256).",
    ),
    (
        "run_process_capture",
        "program",
        true,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "What to run: the name of a document of the open binary (its file is run), or the path of an executable file under the roots.",
    ),
    (
        "run_process_capture",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
    (
        "run_process_capture",
        "stdin",
        false,
        r#"{"maxLength":65536,"type":"string"}"#,
        "Text written to the program's standard input, then closed (at most 64 KiB).",
    ),
    (
        "run_process_capture",
        "timeout_secs",
        false,
        r#"{"default":10,"maximum":120,"minimum":1,"type":"integer"}"#,
        "Wall time in seconds (default 10, at most 120).",
    ),
    (
        "verify_reconstruction",
        "claims",
        true,
        r#"{"maxItems":100,"type":"array"}"#,
        r#"Claim objects, each with a `kind` and that kind's fields, e.g. `{"kind": "bytes_equal", "document": "app", "address": "0x1000", "hex": "5548"}`."#,
    ),
    (
        "verify_reconstruction",
        "session",
        false,
        r#"{"maxLength":4096,"minLength":1,"type":"string"}"#,
        "The binary session to work in: the `session` that open_binary returned. Default: this client's session (the one it opened or named last).",
    ),
];

#[test]
fn every_argument_keeps_its_type_bounds_enum_default_and_description() {
    let (_, tools) = closed();
    let mut expected: BTreeMap<(&str, &str), (bool, Value, &str)> = BTreeMap::new();
    for &(tool, argument, required, schema, description) in TABLE {
        let schema: Value = serde_json::from_str(schema).unwrap();
        expected.insert((tool, argument), (required, schema, description));
    }
    let mut seen = BTreeSet::new();
    for definition in tools.definitions() {
        let tool = definition.name();
        let input = definition.input_schema();
        assert_eq!(input["type"], "object", "{tool}");
        assert_eq!(input["additionalProperties"], false, "{tool}");
        let required: BTreeSet<&str> = input["required"]
            .as_array()
            .unwrap_or_else(|| panic!("{tool} has a required list"))
            .iter()
            .map(|name| name.as_str().unwrap())
            .collect();
        for (argument, body) in input["properties"].as_object().unwrap() {
            let key = (tool, argument.as_str());
            let Some((is_required, schema, description)) = expected.get(&key) else {
                panic!("{tool} has an argument {argument:?} the table does not know");
            };
            let mut body = body.clone();
            let given = body
                .as_object_mut()
                .unwrap()
                .remove("description")
                .unwrap_or_default();
            assert_eq!(given, *description, "{tool}.{argument}: description");
            assert_eq!(&body, schema, "{tool}.{argument}: schema");
            assert_eq!(
                required.contains(argument.as_str()),
                *is_required,
                "{tool}.{argument}: required"
            );
            seen.insert(key);
        }
    }
    let missing: Vec<_> = expected.keys().filter(|key| !seen.contains(key)).collect();
    assert!(
        missing.is_empty(),
        "arguments no longer listed: {missing:?}"
    );
}

#[test]
fn input_schemas_are_inlined() {
    let (_, tools) = closed();
    for definition in tools.definitions() {
        let text = serde_json::to_string(definition.input_schema()).unwrap();
        for keyword in ["\"$ref\"", "\"$defs\"", "\"definitions\"", "\"$schema\""] {
            assert!(
                !text.contains(keyword),
                "{} uses {keyword}",
                definition.name()
            );
        }
    }
}
