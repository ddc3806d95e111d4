//! The imported symbols of an image, from the format-specific readers, and their paging.

use super::demangle::demangle;
use super::elf::ElfDetails;
use crate::core::PROCEDURE_PAGE_SIZE;
use crate::session::{Address, Import, ImportPage, ProcedureName, ProviderError};
use object::FileKind;

/// Prefix of the cursors of import pages; the rest is the index of the next import.
const CURSOR_PREFIX: &str = "import:";

fn symbol(raw: String) -> ProcedureName {
    ProcedureName {
        name: demangle(&raw).unwrap_or_else(|| raw.clone()),
        raw_name: raw,
    }
}

/// The imports of one image: ELF undefined dynamic symbols, PE import descriptors, Mach-O
/// undefined external symbols.
pub(crate) fn collect(data: &[u8], kind: FileKind, elf: ElfDetails) -> Vec<Import> {
    match kind {
        FileKind::Elf32 | FileKind::Elf64 => elf
            .imports
            .into_iter()
            .map(|import| Import {
                symbol: symbol(import.name),
                library: import.library,
                version: import.version,
                ordinal: None,
                stub: import.stub.map(Address::new),
                slot: import.slot.map(Address::new),
            })
            .collect(),
        FileKind::Pe32 | FileKind::Pe64 => super::pe::imports(data, kind)
            .into_iter()
            .map(|import| Import {
                symbol: symbol(
                    import
                        .name
                        .unwrap_or_else(|| format!("#{}", import.ordinal)),
                ),
                library: Some(import.library),
                version: None,
                ordinal: Some(import.ordinal),
                stub: import.stub.map(Address::new),
                slot: Some(Address::new(import.slot)),
            })
            .collect(),
        FileKind::MachO32 | FileKind::MachO64 => super::macho::imports(data, kind)
            .into_iter()
            .map(|import| Import {
                symbol: symbol(import.name),
                library: import.library,
                version: None,
                ordinal: Some(import.ordinal),
                stub: import.stub.map(Address::new),
                slot: import.slot.map(Address::new),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// One page of `imports`: at most `limit` (and at most [`PROCEDURE_PAGE_SIZE`]) from `cursor`.
pub(crate) fn page(
    imports: &[Import],
    cursor: Option<&str>,
    limit: usize,
) -> Result<ImportPage, ProviderError> {
    if limit == 0 {
        return Err(ProviderError::InvalidArgument {
            argument: "limit",
            reason: "must be at least 1".to_owned(),
        });
    }
    let start = match cursor {
        None => 0,
        Some(text) => text
            .strip_prefix(CURSOR_PREFIX)
            .filter(|digits| !digits.starts_with('0') && !digits.starts_with('+'))
            .and_then(|digits| digits.parse::<usize>().ok())
            .filter(|&start| start < imports.len())
            .ok_or_else(|| ProviderError::InvalidCursor {
                cursor: text.into(),
            })?,
    };
    let end = imports.len().min(start + limit.min(PROCEDURE_PAGE_SIZE));
    Ok(ImportPage {
        imports: imports[start..end].to_vec(),
        next_cursor: (end < imports.len()).then(|| format!("{CURSOR_PREFIX}{end}")),
    })
}
