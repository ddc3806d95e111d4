//! The normative bounds of docs/CONTRACT.md section 2.

/// Longest argument value or completion candidate, counted in Unicode scalar values of the raw
/// (unnormalized) string. Longer prefixes are an error; longer candidates are skipped, never
/// truncated (truncation could split a combining sequence).
pub const MAX_VALUE_CHARS: usize = 4_096;

/// Most raw candidates one completion request examines, in source order. Duplicates and
/// over-long candidates count toward it.
pub const SCAN_LIMIT: usize = 10_000;

/// Most unique procedure addresses one discovery collects before it stops (bounded discovery).
pub const PROCEDURE_ADDRESS_LIMIT: usize = 5_000;

/// Page size asked of a provider's `list_procedures` during discovery.
pub const PROCEDURE_PAGE_SIZE: usize = 500;

/// Most values in one MCP completion result.
pub const MAX_VALUES: usize = 100;
