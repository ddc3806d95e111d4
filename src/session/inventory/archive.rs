//! Reading a zip archive's entries into the hasher, never onto disk.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek};

use zip::ZipArchive;

use super::collector::Collector;
use super::page::RejectReason;
use super::{InventoryError, MAX_PATH_CHARS};

/// Reads every entry of the archive into `collector`.
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
    // The reader keys entries by name and keeps one per name, so repeated names are found in
    // the central directory itself and every entry holding one is reported.
    let mut repeated: HashMap<Vec<u8>, usize> = HashMap::new();
    if archive.has_duplicate_names() {
        let start = archive.central_directory_start();
        let mut reader = archive.into_inner();
        repeated = repeated_names(&mut reader, start, collector.limits.max_entries);
        archive = ZipArchive::new(reader).map_err(not_a_zip)?;
        if repeated.is_empty() {
            // The directory could not be read again: report every entry rather than hide one.
            repeated = archive
                .file_names_raw()
                .map(|name| (name.to_vec(), 1))
                .collect();
        }
    }
    let raw_names: Vec<Vec<u8>> = if repeated.is_empty() {
        Vec::new()
    } else {
        archive.file_names_raw().map(<[u8]>::to_vec).collect()
    };
    let mut seen: HashSet<String> = HashSet::new();
    for index in 0..archive.len() {
        collector.count_entry()?;
        collector.check_progress()?;
        if let Some(raw) = raw_names.get(index)
            && let Some(&count) = repeated.get(raw)
        {
            let shown = String::from_utf8_lossy(raw).into_owned();
            for _ in 0..count.max(1) {
                collector.reject(&shown, RejectReason::DuplicatePath);
            }
            seen.insert(entry_path(&shown).unwrap_or(shown));
            continue;
        }
        let (raw_name, size, is_dir, is_symlink) = match archive.by_index_data(index) {
            Ok(entry) => (
                entry
                    .name()
                    .map(|name| name.into_owned())
                    .map_err(|_| String::from_utf8_lossy(entry.name_raw()).into_owned()),
                entry.size(),
                entry.is_dir(),
                entry.is_symlink(),
            ),
            Err(_) => {
                collector.reject(&format!("#{index}"), RejectReason::Unreadable);
                continue;
            }
        };
        let raw_name = match raw_name {
            Ok(name) => name,
            Err(lossy) => {
                collector.reject(&lossy, RejectReason::InvalidName);
                continue;
            }
        };
        let path = entry_path(&raw_name);
        if is_dir {
            // Directories hold nothing to hash; only a name that would escape is worth a report.
            if let Err(reason @ (RejectReason::AbsolutePath | RejectReason::ParentComponent)) = path
            {
                collector.reject(&raw_name, reason);
            }
            continue;
        }
        let path = match path {
            Ok(path) => path,
            Err(reason) => {
                collector.reject(&raw_name, reason);
                continue;
            }
        };
        if is_symlink {
            collector.reject(&raw_name, RejectReason::Symlink);
            continue;
        }
        if !seen.insert(path.clone()) {
            collector.reject(&raw_name, RejectReason::DuplicatePath);
            continue;
        }
        match archive.by_index(index) {
            Ok(content) => collector.hash(path, size, content)?,
            Err(_) => collector.reject(&raw_name, RejectReason::Unreadable),
        }
    }
    Ok(())
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
