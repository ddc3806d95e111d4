//! PE details read entry by entry, so that one malformed entry does not hide the others: the
//! exports (a malformed forwarder string drops only its own entry) and the imports with their
//! DLL, IAT slot and import thunk.

use std::collections::HashMap;

use object::LittleEndian as LE;
use object::pe;
use object::read::pe::{ImageNtHeaders, ImageOptionalHeader, ImageThunkData, PeFile};
use object::{FileKind, Object, ObjectSection, SectionFlags};

/// One export that is not a forwarder.
pub(crate) struct PeExport {
    /// Its address.
    pub(crate) address: u64,
    /// Its name, when exported by name.
    pub(crate) name: Option<String>,
}

/// One entry of an import descriptor.
pub(crate) struct PeImport {
    /// The imported name, or `None` for an import by ordinal.
    pub(crate) name: Option<String>,
    /// The ordinal of an import by ordinal, or the hint of a named import.
    pub(crate) ordinal: u32,
    /// The DLL of the descriptor.
    pub(crate) library: String,
    /// The `jmp [slot]` thunk found in code, if any.
    pub(crate) stub: Option<u64>,
    /// The IAT entry.
    pub(crate) slot: u64,
}

/// The exports of a PE image (empty for other kinds).
pub(crate) fn exports(data: &[u8], kind: FileKind) -> Vec<PeExport> {
    match kind {
        FileKind::Pe32 => read_exports::<pe::ImageNtHeaders32>(data),
        FileKind::Pe64 => read_exports::<pe::ImageNtHeaders64>(data),
        _ => None,
    }
    .unwrap_or_default()
}

fn read_exports<Pe: ImageNtHeaders>(data: &[u8]) -> Option<Vec<PeExport>> {
    let file = PeFile::<Pe, &[u8]>::parse(data).ok()?;
    let table = file.export_table().ok()??;
    let image_base = file.nt_headers().optional_header().image_base();
    let mut named = vec![false; table.addresses().len()];
    let mut found = Vec::new();
    for (pointer, index) in table.name_iter() {
        let Ok(address) = table.address_by_index(index) else {
            continue;
        };
        if let Some(seen) = named.get_mut(index.0 as usize) {
            *seen = true;
        }
        if address == 0 || table.is_forward(address) {
            continue;
        }
        let name = table
            .name_from_pointer(pointer)
            .ok()
            .map(|name| String::from_utf8_lossy(name).into_owned());
        found.push(PeExport {
            address: image_base.wrapping_add(u64::from(address)),
            name,
        });
    }
    for (index, address) in table.addresses().iter().enumerate() {
        let address = address.get(LE);
        if named[index] || address == 0 || table.is_forward(address) {
            continue;
        }
        found.push(PeExport {
            address: image_base.wrapping_add(u64::from(address)),
            name: None,
        });
    }
    Some(found)
}

/// The imports of a PE image in descriptor order (empty for other kinds).
pub(crate) fn imports(data: &[u8], kind: FileKind) -> Vec<PeImport> {
    match kind {
        FileKind::Pe32 => read_imports::<pe::ImageNtHeaders32>(data),
        FileKind::Pe64 => read_imports::<pe::ImageNtHeaders64>(data),
        _ => None,
    }
    .unwrap_or_default()
}

fn read_imports<Pe: ImageNtHeaders>(data: &[u8]) -> Option<Vec<PeImport>> {
    let file = PeFile::<Pe, &[u8]>::parse(data).ok()?;
    let table = file.import_table().ok()??;
    let image_base = file.nt_headers().optional_header().image_base();
    let thunk_size: u32 = if file.is_64() { 8 } else { 4 };
    let mut found = Vec::new();
    let mut descriptors = table.descriptors().ok()?;
    while let Ok(Some(descriptor)) = descriptors.next() {
        let library = table
            .name(descriptor.name.get(LE))
            .map(|name| String::from_utf8_lossy(name).into_owned())
            .unwrap_or_default();
        let first_thunk = descriptor.first_thunk.get(LE);
        let lookup = match descriptor.original_first_thunk.get(LE) {
            0 => first_thunk,
            rva => rva,
        };
        let Ok(mut thunks) = table.thunks(lookup) else {
            continue;
        };
        let mut entry: u32 = 0;
        while let Ok(Some(thunk)) = thunks.next::<Pe>() {
            let slot = image_base.wrapping_add(u64::from(
                first_thunk.wrapping_add(entry.wrapping_mul(thunk_size)),
            ));
            entry += 1;
            let (name, ordinal) = if thunk.is_ordinal() {
                (None, u32::from(thunk.ordinal()))
            } else {
                match table.hint_name(thunk.address()) {
                    Ok((hint, name)) => (
                        Some(String::from_utf8_lossy(name).into_owned()),
                        u32::from(hint),
                    ),
                    Err(_) => continue,
                }
            };
            found.push(PeImport {
                name,
                ordinal,
                library: library.clone(),
                stub: None,
                slot,
            });
        }
    }
    find_thunks(&file, &mut found);
    Some(found)
}

/// Longest code scanned for import thunks, in bytes.
const MAX_THUNK_SCAN: usize = 64 << 20;

/// Sets the stub of each import to the first `jmp [slot]` (`ff 25`) in executable sections:
/// RIP-relative on x64, absolute on x86.
fn find_thunks<'data, Pe: ImageNtHeaders>(
    file: &PeFile<'data, Pe, &'data [u8]>,
    imports: &mut [PeImport],
) {
    let by_slot: HashMap<u64, usize> = imports
        .iter()
        .enumerate()
        .map(|(index, import)| (import.slot, index))
        .collect();
    let machine = file.nt_headers().file_header().machine.get(LE);
    let mut scanned = 0;
    for section in file.sections() {
        let SectionFlags::Coff { characteristics } = section.flags() else {
            continue;
        };
        if characteristics.0 & pe::IMAGE_SCN_MEM_EXECUTE.0 == 0 {
            continue;
        }
        let Ok(bytes) = section.data() else { continue };
        scanned += bytes.len();
        if scanned > MAX_THUNK_SCAN {
            return;
        }
        let address = section.address();
        for at in 0..bytes.len().saturating_sub(5) {
            if bytes[at] != 0xff || bytes[at + 1] != 0x25 {
                continue;
            }
            let field =
                u32::from_le_bytes([bytes[at + 2], bytes[at + 3], bytes[at + 4], bytes[at + 5]]);
            let target = match machine {
                pe::IMAGE_FILE_MACHINE_AMD64 => address
                    .wrapping_add(at as u64 + 6)
                    .wrapping_add_signed(i64::from(field as i32)),
                pe::IMAGE_FILE_MACHINE_I386 => u64::from(field),
                _ => return,
            };
            if let Some(&index) = by_slot.get(&target) {
                let import = &mut imports[index];
                if import.stub.is_none() {
                    import.stub = Some(address + at as u64);
                }
            }
        }
    }
}
