//! Reading a zip archive's entries into the hasher, never onto disk.

use std::collections::HashSet;
use std::io::{Read, Seek};

use zip::ZipArchive;

use super::collect::Collector;
use super::page::RejectReason;
use super::{InventoryError, MAX_PATH_CHARS};

/// Reads every entry of the archive into `collector`.
pub(super) fn read_zip<R: Read + Seek>(
    reader: R,
    collector: &mut Collector<'_>,
) -> Result<(), InventoryError> {
    let mut archive = ZipArchive::new(reader).map_err(|error| InventoryError::NotAZip {
        path: collector.root_path().to_owned(),
        reason: error.to_string(),
    })?;
    if archive.len() > collector.limits.max_entries {
        return Err(collector.too_many_entries());
    }
    let mut seen: HashSet<String> = HashSet::new();
    for index in 0..archive.len() {
        collector.count_entry()?;
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
