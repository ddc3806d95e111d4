//! Shared helpers for the inventory tests: sample files with real magic numbers, zip archives
//! built with the `zip` crate's writer, and digests.

use std::io::{Cursor, Write};
use std::path::Path;

use sha2::{Digest, Sha256};
use zip::ZipWriter;
use zip::write::SimpleFileOptions;

/// The start of a 64-bit little-endian ELF file.
pub const ELF: &[u8] = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\x3e\0";

/// The start of a 64-bit Mach-O file.
pub const MACH_O: &[u8] = b"\xcf\xfa\xed\xfe\x07\0\0\x01\x03\0\0\0\x02\0\0\0";

/// A minimal PE prefix: `MZ`, `e_lfanew` = 0x40, `PE\0\0`.
pub fn pe() -> Vec<u8> {
    let mut bytes = vec![0u8; 0x48];
    bytes[..2].copy_from_slice(b"MZ");
    bytes[0x3c] = 0x40;
    bytes[0x40..0x44].copy_from_slice(b"PE\0\0");
    bytes
}

/// Lowercase hexadecimal SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes `bytes` at `relative` below `root`, creating directories.
pub fn write_file(root: &Path, relative: &str, bytes: &[u8]) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Version 1 of a small application folder.
pub fn app_v1() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("bin/app", [ELF, b"version 1".as_slice()].concat()),
        ("lib/libcore.dylib", [MACH_O, b"core 1".as_slice()].concat()),
        ("tools/setup.exe", pe()),
        ("README.txt", b"Read me.\n".to_vec()),
        ("scripts/run.sh", b"#!/bin/sh\nexec bin/app\n".to_vec()),
    ]
}

/// Version 2: `bin/app` changed, `tools/setup.exe` removed, `lib/libnew.so` added.
pub fn app_v2() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("bin/app", [ELF, b"version 2".as_slice()].concat()),
        ("lib/libcore.dylib", [MACH_O, b"core 1".as_slice()].concat()),
        ("lib/libnew.so", [ELF, b"new".as_slice()].concat()),
        ("README.txt", b"Read me.\n".to_vec()),
        ("scripts/run.sh", b"#!/bin/sh\nexec bin/app\n".to_vec()),
    ]
}

/// Writes `files` below `root`.
pub fn write_tree(root: &Path, files: &[(&str, Vec<u8>)]) {
    for (path, bytes) in files {
        write_file(root, path, bytes);
    }
}

/// One entry of a test archive.
pub enum ZipEntry<'a> {
    /// A file, deflated.
    File(&'a str, &'a [u8]),
    /// A file, stored.
    Stored(&'a str, &'a [u8]),
    /// A directory entry.
    Dir(&'a str),
    /// A symbolic link entry.
    Symlink(&'a str, &'a str),
}

/// A zip archive holding `entries`, in that order, built with the `zip` writer.
pub fn zip_bytes(entries: &[ZipEntry<'_>]) -> Vec<u8> {
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = SimpleFileOptions::default();
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for entry in entries {
        match entry {
            ZipEntry::File(name, bytes) => {
                writer.start_file(*name, deflated).unwrap();
                writer.write_all(bytes).unwrap();
            }
            ZipEntry::Stored(name, bytes) => {
                writer.start_file(*name, stored).unwrap();
                writer.write_all(bytes).unwrap();
            }
            ZipEntry::Dir(name) => writer.add_directory(*name, deflated).unwrap(),
            ZipEntry::Symlink(name, target) => {
                writer.add_symlink(*name, *target, deflated).unwrap()
            }
        }
    }
    writer.finish().unwrap().into_inner()
}

/// A zip archive of `files`.
pub fn zip_of(files: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let entries: Vec<ZipEntry<'_>> = files
        .iter()
        .map(|(path, bytes)| ZipEntry::File(path, bytes))
        .collect();
    zip_bytes(&entries)
}

/// The paths of an inventory's occurrences, in order.
pub fn paths(inventory: &rea::inventory::Inventory) -> Vec<&str> {
    inventory
        .occurrences()
        .iter()
        .map(|o| o.path.as_str())
        .collect()
}

/// An inventory's rejected entries as (path, reason), in order.
pub fn rejections(
    inventory: &rea::inventory::Inventory,
) -> Vec<(&str, rea::inventory::RejectReason)> {
    inventory
        .rejected()
        .iter()
        .map(|r| (r.path.as_str(), r.reason))
        .collect()
}
