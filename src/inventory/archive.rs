//! Reading a zip archive's entries into the hasher, never onto disk.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek};

use zip::ZipArchive;

use super::collector::{Collector, Content};
use super::page::RejectReason;
use super::{InventoryError, MAX_PATH_CHARS};

/// What the central directory says of one entry the reader holds.
struct EntryInfo {
    /// The name as stored, lossily decoded for reports.
    shown: String,
    /// The name decoded, or `None` when it cannot be.
    name: Option<String>,
    is_dir: bool,
    is_symlink: bool,
    size: u64,
    /// How many central directory entries hold this exact name (the reader keeps one).
    copies: usize,
}

impl EntryInfo {
    /// The inventory path the entry's name normalises to (see [`entry_path`]).
    fn path(&self) -> Option<Result<String, RejectReason>> {
        self.name.as_deref().map(entry_path)
    }
}

/// Reads every entry of the archive into `collector`.
///
/// Names are compared once normalised ([`entry_path`]: `./`, repeated `/`, a trailing `/`,
/// backslashes): every entry of a normalised name that several entries hold, one of them
/// not a directory, is reported as `duplicate_path` and none of them is hashed, since which
/// one an extractor keeps depends on the tool. Directories alone sharing a name merge.
pub(super) fn read_zip<R: Read + Seek>(
    reader: R,
    collector: &mut Collector<'_>,
) -> Result<(), InventoryError> {
    let not_a_zip = |error: zip::result::ZipError| InventoryError::NotAZip {
        path: collector.root_path().into(),
        reason: error.to_string(),
    };
    let mut archive = ZipArchive::new(reader).map_err(not_a_zip)?;
    let not_a_zip = |error: zip::result::ZipError| InventoryError::NotAZip {
        path: collector.root_path().into(),
        reason: error.to_string(),
    };
    if archive.len() > collector.limits.max_entries {
        return Err(collector.too_many_entries());
    }
    // The reader keys entries by name and keeps one per name, so repeated names are counted in
    // the central directory itself and every entry holding one is reported.
    let mut copies: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut uncounted = false;
    if archive.has_duplicate_names() {
        let start = archive.central_directory_start();
        let mut reader = archive.into_inner();
        copies = repeated_names(&mut reader, start, collector.limits.max_entries);
        archive = ZipArchive::new(reader).map_err(not_a_zip)?;
        // The directory could not be read again: report every entry rather than hide one.
        uncounted = copies.is_empty();
    }
    let entries: Vec<Option<EntryInfo>> = (0..archive.len())
        .map(|index| {
            let entry = archive.by_index_data(index).ok()?;
            let raw = entry.name_raw();
            Some(EntryInfo {
                shown: String::from_utf8_lossy(raw).into_owned(),
                name: entry.name().ok().map(|name| name.into_owned()),
                is_dir: entry.is_dir(),
                is_symlink: entry.is_symlink(),
                size: entry.size(),
                copies: copies.get(raw).copied().unwrap_or(1),
            })
        })
        .collect();
    let shared = shared_paths(entries.iter().flatten());
    for (index, entry) in entries.iter().enumerate() {
        collector.count_entry()?;
        collector.check_progress()?;
        let Some(entry) = entry else {
            collector.reject(&format!("#{index}"), RejectReason::Unreadable);
            continue;
        };
        let report = |collector: &mut Collector<'_>, reason: RejectReason| {
            for _ in 0..entry.copies {
                collector.reject(&entry.shown, reason);
            }
        };
        if uncounted {
            report(collector, RejectReason::DuplicatePath);
            continue;
        }
        let path = match entry.path() {
            None => {
                report(collector, RejectReason::InvalidName);
                continue;
            }
            Some(Ok(path)) if shared.contains(path.as_str()) => {
                report(collector, RejectReason::DuplicatePath);
                continue;
            }
            Some(path) => path,
        };
        if entry.is_dir {
            // Directories hold nothing to hash; only a name that would escape is worth a report.
            if let Err(reason @ (RejectReason::AbsolutePath | RejectReason::ParentComponent)) = path
            {
                report(collector, reason);
            }
            continue;
        }
        let path = match path {
            Ok(path) => path,
            Err(reason) => {
                report(collector, reason);
                continue;
            }
        };
        if entry.is_symlink {
            report(collector, RejectReason::Symlink);
            continue;
        }
        match archive.by_index(index) {
            Ok(content) => collector.hash(
                path,
                ArchiveEntry {
                    content,
                    declared_size: entry.size,
                },
            )?,
            Err(_) => collector.reject(&entry.shown, RejectReason::Unreadable),
        }
    }
    Ok(())
}

/// The normalised paths that more than one central directory entry holds, at least one of
/// them not a directory.
fn shared_paths<'a>(entries: impl Iterator<Item = &'a EntryInfo>) -> HashSet<String> {
    let mut holders: HashMap<String, (usize, bool)> = HashMap::new();
    for entry in entries {
        if let Some(Ok(path)) = entry.path() {
            let (count, any_file) = holders.entry(path).or_insert((0, false));
            *count += entry.copies;
            *any_file |= !entry.is_dir;
        }
    }
    holders
        .into_iter()
        .filter(|(_, (count, any_file))| *count > 1 && *any_file)
        .map(|(path, _)| path)
        .collect()
}

/// An archive entry being hashed: the zip reader checks its CRC; its bytes must add up to its
/// declared size, else it is reported `unreadable`.
struct ArchiveEntry<R> {
    content: R,
    declared_size: u64,
}

impl<R: Read> Read for ArchiveEntry<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        self.content.read(buffer)
    }
}

impl<R: Read> Content for ArchiveEntry<R> {
    fn declared_size(&self) -> u64 {
        self.declared_size
    }

    /// The archive file itself is checked as a whole (see `Inventory::zip_file`).
    fn unchanged(&self) -> bool {
        true
    }

    fn mismatch(&self) -> RejectReason {
        RejectReason::Unreadable
    }
}

/// Signature of a central directory file header.
const CENTRAL_HEADER: u32 = 0x0201_4b50;

/// Names held by more than one central directory entry, with how many entries hold each
/// (empty when the directory cannot be read at `start`).
fn repeated_names<R: Read + Seek>(
    reader: &mut R,
    start: u64,
    max_entries: usize,
) -> HashMap<Vec<u8>, usize> {
    let mut counts: HashMap<Vec<u8>, usize> = HashMap::new();
    if reader.seek(std::io::SeekFrom::Start(start)).is_err() {
        return counts;
    }
    let mut header = [0u8; 46];
    for _ in 0..=max_entries {
        if reader.read_exact(&mut header).is_err() {
            break;
        }
        if u32::from_le_bytes([header[0], header[1], header[2], header[3]]) != CENTRAL_HEADER {
            break;
        }
        let field = |at: usize| usize::from(u16::from_le_bytes([header[at], header[at + 1]]));
        let (name_len, extra_len, comment_len) = (field(28), field(30), field(32));
        let mut name = vec![0u8; name_len];
        if reader.read_exact(&mut name).is_err() {
            break;
        }
        let skip = i64::try_from(extra_len + comment_len).unwrap_or(0);
        if reader.seek(std::io::SeekFrom::Current(skip)).is_err() {
            break;
        }
        *counts.entry(name).or_insert(0) += 1;
    }
    counts.retain(|_, count| *count > 1);
    counts
}

/// The inventory path of an archive entry name, or why the name is refused.
///
/// Backslashes count as separators (archivers on Windows write them); empty and `.`
/// components are dropped. Names with a NUL byte, an absolute path, a drive letter or a `..`
/// component are refused.
pub(crate) fn entry_path(name: &str) -> Result<String, RejectReason> {
    if name.contains('\0') {
        return Err(RejectReason::InvalidName);
    }
    let name = name.replace('\\', "/");
    let bytes = name.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if name.starts_with('/') || drive {
        return Err(RejectReason::AbsolutePath);
    }
    let mut components = Vec::new();
    for component in name.split('/') {
        match component {
            ".." => return Err(RejectReason::ParentComponent),
            "" | "." => {}
            other => components.push(other),
        }
    }
    if components.is_empty() {
        return Err(RejectReason::InvalidName);
    }
    let path = components.join("/");
    if path.chars().count() > MAX_PATH_CHARS {
        return Err(RejectReason::PathTooLong);
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names() {
        let cases = [
            ("bin/app", Ok("bin/app")),
            ("./bin//app", Ok("bin/app")),
            ("bin\\app.exe", Ok("bin/app.exe")),
            ("dir/", Ok("dir")),
            ("../evil", Err(RejectReason::ParentComponent)),
            ("a/../../evil", Err(RejectReason::ParentComponent)),
            ("..\\evil", Err(RejectReason::ParentComponent)),
            ("/abs", Err(RejectReason::AbsolutePath)),
            ("\\abs", Err(RejectReason::AbsolutePath)),
            ("C:evil", Err(RejectReason::AbsolutePath)),
            ("a\0b", Err(RejectReason::InvalidName)),
            ("", Err(RejectReason::InvalidName)),
            ("./", Err(RejectReason::InvalidName)),
        ];
        for (name, expected) in cases {
            assert_eq!(entry_path(name), expected.map(str::to_owned), "{name:?}");
        }
    }
}
