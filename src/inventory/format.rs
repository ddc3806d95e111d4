//! Executable format detection from a file's first bytes.

use super::page::ExecutableFormat;

/// How many leading bytes of a file [`detect_format`] is given: enough for a PE header at the
/// usual offsets (a PE whose `PE\0\0` signature starts past this is reported as `unknown`).
pub(crate) const FORMAT_PREFIX_BYTES: usize = 4_096;

/// Above this many slices a `CA FE BA BE` file is a Java class (whose next bytes are a version
/// number of 45 or more), not a Mach-O fat binary.
const MAX_FAT_SLICES: u32 = 44;

/// The executable format of a file that starts with `prefix` (its first bytes, up to
/// 4,096 are looked at).
pub fn detect_format(prefix: &[u8]) -> ExecutableFormat {
    let be32 = |at: usize| {
        prefix
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let le32 = |at: usize| {
        prefix
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    match be32(0) {
        Some(0x7f45_4c46) => ExecutableFormat::Elf,
        Some(0xfeed_face | 0xcefa_edfe | 0xfeed_facf | 0xcffa_edfe) => ExecutableFormat::MachO,
        Some(0xcafe_babf) => ExecutableFormat::MachOFat,
        Some(0xcafe_babe) => match be32(4) {
            Some(1..=MAX_FAT_SLICES) => ExecutableFormat::MachOFat,
            Some(_) => ExecutableFormat::JavaClass,
            None => ExecutableFormat::Unknown,
        },
        Some(0x504b_0304 | 0x504b_0506) => ExecutableFormat::Zip,
        Some(0x0061_736d) => ExecutableFormat::Wasm,
        _ if prefix.starts_with(b"!<arch>\n") => ExecutableFormat::Ar,
        _ if prefix.starts_with(b"#!") => ExecutableFormat::Script,
        _ if prefix.starts_with(b"MZ") => {
            let signature = le32(0x3c)
                .and_then(|offset| usize::try_from(offset).ok())
                .and_then(|offset| prefix.get(offset..offset.checked_add(4)?));
            if signature == Some(b"PE\0\0") {
                ExecutableFormat::Pe
            } else {
                ExecutableFormat::Unknown
            }
        }
        _ => ExecutableFormat::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers() {
        let mut pe = vec![0u8; 0x90];
        pe[..2].copy_from_slice(b"MZ");
        pe[0x3c] = 0x80;
        pe[0x80..0x84].copy_from_slice(b"PE\0\0");
        let cases: [(&[u8], ExecutableFormat); 12] = [
            (b"\x7fELF\x02\x01", ExecutableFormat::Elf),
            (b"\xcf\xfa\xed\xfe\x07", ExecutableFormat::MachO),
            (b"\xfe\xed\xfa\xce", ExecutableFormat::MachO),
            (b"\xca\xfe\xba\xbe\0\0\0\x02", ExecutableFormat::MachOFat),
            (b"\xca\xfe\xba\xbe\0\0\0\x34", ExecutableFormat::JavaClass),
            (b"\xca\xfe\xba\xbe", ExecutableFormat::Unknown),
            (b"PK\x03\x04", ExecutableFormat::Zip),
            (b"\0asm\x01\0\0\0", ExecutableFormat::Wasm),
            (b"!<arch>\nfoo", ExecutableFormat::Ar),
            (b"#!/bin/sh\n", ExecutableFormat::Script),
            (&pe, ExecutableFormat::Pe),
            (b"MZ\0\0", ExecutableFormat::Unknown),
        ];
        for (prefix, format) in cases {
            assert_eq!(detect_format(prefix), format, "{prefix:x?}");
        }
        assert_eq!(detect_format(b""), ExecutableFormat::Unknown);
    }
}
