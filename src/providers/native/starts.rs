//! Function starts for stripped binaries from format-specific tables: Mach-O
//! `LC_FUNCTION_STARTS` and PE `.pdata` (ELF `.eh_frame` is in [`super::eh_frame`]).

use object::read::macho::{LoadCommandVariant, MachHeader, MachOFile};
use object::read::pe::{ImageNtHeaders, ImageOptionalHeader, PeFile, PeFile32, PeFile64};
use object::{FileKind, LittleEndian as LE, Object, ObjectSegment, macho, pe};

/// A function start, with its size when the table records one.
pub(crate) struct Start {
    pub(crate) address: u64,
    pub(crate) size: Option<u64>,
}

/// Addresses from Mach-O `LC_FUNCTION_STARTS`, if the image has the command.
pub(crate) fn macho_function_starts(data: &[u8], kind: FileKind) -> Vec<u64> {
    let starts = match kind {
        FileKind::MachO32 => function_starts::<macho::MachHeader32<object::Endianness>>(data),
        FileKind::MachO64 => function_starts::<macho::MachHeader64<object::Endianness>>(data),
        _ => None,
    };
    starts.unwrap_or_default()
}

fn function_starts<Mach: MachHeader<Endian = object::Endianness>>(data: &[u8]) -> Option<Vec<u64>> {
    let file = MachOFile::<Mach, &[u8]>::parse(data).ok()?;
    let endian = file.endian();
    let text_address = file
        .segments()
        .find(|segment| segment.name().ok().flatten() == Some("__TEXT"))
        .map(|segment| segment.address())?;
    let mut starts = Vec::new();
    let mut commands = file.macho_load_commands().ok()?;
    while let Ok(Some(command)) = commands.next() {
        let Ok(LoadCommandVariant::LinkeditData(linkedit)) = command.variant() else {
            continue;
        };
        if linkedit.cmd.get(endian) != macho::LC_FUNCTION_STARTS {
            continue;
        }
        let Ok(iterator) = linkedit.function_starts(endian, data, text_address) else {
            continue;
        };
        // The iterator stops at the first malformed entry.
        starts.extend(iterator.map_while(Result::ok));
    }
    Some(starts)
}

/// Entries of the PE exception directory (`.pdata`) for x86-64 and ARM64 images.
pub(crate) fn pe_runtime_functions(data: &[u8], kind: FileKind) -> Vec<Start> {
    let starts = match kind {
        FileKind::Pe32 => runtime_functions(&PeFile32::parse(data).ok()),
        FileKind::Pe64 => runtime_functions(&PeFile64::parse(data).ok()),
        _ => None,
    };
    starts.unwrap_or_default()
}

fn runtime_functions<Pe: ImageNtHeaders>(file: &Option<PeFile<'_, Pe>>) -> Option<Vec<Start>> {
    let file = file.as_ref()?;
    let directory = file.data_directory(pe::IMAGE_DIRECTORY_ENTRY_EXCEPTION)?;
    let bytes = directory.data(file.data(), &file.section_table()).ok()?;
    let image_base = file.nt_headers().optional_header().image_base();
    let machine = file.nt_headers().file_header().machine.get(LE);
    let word = |chunk: &[u8], at: usize| {
        chunk
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
    };
    let starts = if machine == pe::IMAGE_FILE_MACHINE_AMD64 {
        bytes
            .chunks_exact(12)
            .filter_map(|entry| {
                let begin = word(entry, 0)?;
                let end = word(entry, 4)?;
                Some(Start {
                    address: image_base.wrapping_add(u64::from(begin)),
                    size: end.checked_sub(begin).map(u64::from).filter(|&s| s > 0),
                })
            })
            .collect()
    } else if machine == pe::IMAGE_FILE_MACHINE_ARM64 {
        bytes
            .chunks_exact(8)
            .filter_map(|entry| {
                let begin = word(entry, 0)?;
                let unwind = word(entry, 4)?;
                // Packed unwind data (flag bits set) carries the function length in words.
                let size = (unwind & 3 != 0).then(|| u64::from((unwind >> 2) & 0x7ff) * 4);
                Some(Start {
                    address: image_base.wrapping_add(u64::from(begin)),
                    size: size.filter(|&s| s > 0),
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    Some(starts)
}
