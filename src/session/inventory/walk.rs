//! Walking a directory tree without following links out of it.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use super::collect::Collector;
use super::page::RejectReason;
use super::{InventoryError, MAX_PATH_CHARS};

/// Walks the tree at `root` into `collector`. The order of the walk does not matter: the
/// collector sorts by path at the end, and the bounds count totals.
pub(super) fn walk(root: &Path, collector: &mut Collector<'_>) -> Result<(), InventoryError> {
    let label = || root.to_string_lossy().into_owned();
    let root = fs::canonicalize(root).map_err(|source| InventoryError::Unreadable {
        path: label(),
        source,
    })?;
    if !root.is_dir() {
        return Err(InventoryError::NotADirectory { path: label() });
    }
    let mut pending: Vec<(PathBuf, String, usize)> = vec![(root.clone(), String::new(), 0)];
    while let Some((directory, relative, depth)) = pending.pop() {
        let entries = match fs::read_dir(&directory) {
            Ok(entries) => entries,
            Err(source) if depth == 0 => {
                return Err(InventoryError::Unreadable {
                    path: label(),
                    source,
                });
            }
            Err(_) => {
                collector.reject(&relative, RejectReason::Unreadable);
                continue;
            }
        };
        for entry in entries {
            collector.count_entry()?;
            let Ok(entry) = entry else {
                collector.reject(&relative, RejectReason::Unreadable);
                continue;
            };
            let name = entry.file_name();
            let path = join(&relative, &name.to_string_lossy());
            if name.to_str().is_none() {
                collector.reject(&path, RejectReason::InvalidName);
                continue;
            }
            if path.chars().count() > MAX_PATH_CHARS {
                collector.reject(&path, RejectReason::PathTooLong);
                continue;
            }
            let Ok(file_type) = entry.file_type() else {
                collector.reject(&path, RejectReason::Unreadable);
                continue;
            };
            if file_type.is_dir() {
                if depth + 1 > collector.limits.max_depth {
                    collector.reject(&path, RejectReason::TooDeep);
                } else {
                    pending.push((entry.path(), path, depth + 1));
                }
            } else if file_type.is_file() {
                hash_file(collector, path, &entry.path())?;
            } else if file_type.is_symlink() {
                follow_link(collector, &root, path, &entry.path())?;
            } else {
                collector.reject(&path, RejectReason::SpecialFile);
            }
        }
    }
    Ok(())
}

/// Inventories the target of a link if it is a regular file below `root`.
fn follow_link(
    collector: &mut Collector<'_>,
    root: &Path,
    path: String,
    link: &Path,
) -> Result<(), InventoryError> {
    let Ok(target) = fs::canonicalize(link) else {
        collector.reject(&path, RejectReason::DanglingSymlink);
        return Ok(());
    };
    if !target.starts_with(root) {
        collector.reject(&path, RejectReason::SymlinkOutsideRoot);
        return Ok(());
    }
    match fs::metadata(&target) {
        Ok(metadata) if metadata.is_dir() => {
            collector.reject(&path, RejectReason::SymlinkToDirectory);
            Ok(())
        }
        Ok(metadata) if metadata.is_file() => hash_file(collector, path, &target),
        Ok(_) => {
            collector.reject(&path, RejectReason::SpecialFile);
            Ok(())
        }
        Err(_) => {
            collector.reject(&path, RejectReason::DanglingSymlink);
            Ok(())
        }
    }
}

fn hash_file(
    collector: &mut Collector<'_>,
    path: String,
    file: &Path,
) -> Result<(), InventoryError> {
    let opened = File::open(file).and_then(|handle| Ok((handle.metadata()?.len(), handle)));
    match opened {
        Ok((size, handle)) => collector.hash(path, size, handle),
        Err(_) => {
            collector.reject(&path, RejectReason::Unreadable);
            Ok(())
        }
    }
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}/{name}")
    }
}
