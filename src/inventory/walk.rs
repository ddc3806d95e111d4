//! Walking a directory tree relative to directory handles, never following a link.
//!
//! The root is opened once ([`CheckedDirectory::open`], which follows links in the root path
//! itself and checks the [`Confinement`] on the opened handle). Below it, every subdirectory
//! is opened with `openat(parent, name, O_DIRECTORY | O_NOFOLLOW)` and every file with
//! `openat(parent, name, O_NOFOLLOW)` and then `fstat`-checked, so swapping an entry for a
//! symbolic link (or a FIFO, or a device) while the walk runs can never redirect it: the swapped
//! entry fails to open as what it was listed as, and is reported instead.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

use super::collector::{Collector, Content, Stamp};
use super::page::RejectReason;
use super::{InventoryError, MAX_PATH_CHARS};
use crate::base::files::{
    CheckedDirectory, CheckedFile, Confinement, FileError, FileKind, FileLimit,
};
use crate::text::Quoted;

/// A directory waiting to be read: its parent's handle and its name there.
struct Pending {
    parent: Arc<CheckedDirectory>,
    name: OsString,
    relative: String,
    depth: usize,
}

/// Walks the tree at `root` into `collector`. The order of the walk does not matter: the
/// collector sorts by path at the end, and the bounds count totals.
///
/// Open handles stay bounded: a directory's handle is held while entries of it wait, and the
/// stack is depth-first, so at most one handle per level (plus the root) is open.
pub(super) fn walk(
    root: &Path,
    confinement: &Confinement,
    collector: &mut Collector<'_>,
) -> Result<(), InventoryError> {
    let label = || Quoted::path(root);
    let top = CheckedDirectory::open(root, confinement).map_err(|error| match error {
        FileError::NotRegular { .. } => InventoryError::NotADirectory { path: label() },
        FileError::Open { source, .. } => InventoryError::Unreadable {
            path: label(),
            source,
        },
        other => InventoryError::File(other),
    })?;
    let top = Arc::new(top);
    let entries =
        top.entries(collector.entries_left())
            .map_err(|source| InventoryError::Unreadable {
                path: label(),
                source,
            })?;
    let mut pending: Vec<Pending> = Vec::new();
    list(&top, "", 0, entries, collector, &mut pending)?;
    while let Some(next) = pending.pop() {
        collector.check_progress()?;
        // O_NOFOLLOW | O_DIRECTORY: a directory swapped for a link is not followed.
        let directory = match next.parent.open_at(Path::new(&next.name)) {
            Ok(directory) => Arc::new(directory),
            Err(error) => {
                let swapped = [libc_eloop(), libc_enotdir()].map(Some);
                let reason = if swapped.contains(&error.raw_os_error()) {
                    RejectReason::Symlink
                } else {
                    RejectReason::Unreadable
                };
                collector.reject(&next.relative, reason);
                continue;
            }
        };
        drop(next.parent);
        let Ok(entries) = directory.entries(collector.entries_left()) else {
            collector.reject(&next.relative, RejectReason::Unreadable);
            continue;
        };
        list(
            &directory,
            &next.relative,
            next.depth,
            entries,
            collector,
            &mut pending,
        )?;
    }
    Ok(())
}

fn libc_eloop() -> i32 {
    rustix::io::Errno::LOOP.raw_os_error()
}

fn libc_enotdir() -> i32 {
    rustix::io::Errno::NOTDIR.raw_os_error()
}

/// Handles the entries of one directory: files are hashed now, subdirectories queued.
fn list(
    directory: &Arc<CheckedDirectory>,
    relative: &str,
    depth: usize,
    entries: Vec<(OsString, FileKind)>,
    collector: &mut Collector<'_>,
    pending: &mut Vec<Pending>,
) -> Result<(), InventoryError> {
    for (name, kind) in entries {
        collector.count_entry()?;
        collector.check_progress()?;
        let path = join(relative, &name.to_string_lossy());
        if name.to_str().is_none() {
            collector.reject(&path, RejectReason::InvalidName);
            continue;
        }
        if path.chars().count() > MAX_PATH_CHARS {
            collector.reject(&path, RejectReason::PathTooLong);
            continue;
        }
        match kind {
            FileKind::Directory => {
                if depth + 1 > collector.limits.max_depth {
                    collector.reject(&path, RejectReason::TooDeep);
                } else {
                    pending.push(Pending {
                        parent: Arc::clone(directory),
                        name,
                        relative: path,
                        depth: depth + 1,
                    });
                }
            }
            FileKind::Regular => hash_file(collector, directory, &name, path)?,
            FileKind::Symlink => collector.reject(&path, RejectReason::Symlink),
            _ => collector.reject(&path, RejectReason::SpecialFile),
        }
    }
    Ok(())
}

/// Opens `name` in `directory` without following a link, checks it is (still) a regular file,
/// and hashes it.
fn hash_file(
    collector: &mut Collector<'_>,
    directory: &CheckedDirectory,
    name: &OsString,
    path: String,
) -> Result<(), InventoryError> {
    let limit = FileLimit {
        bytes: u64::MAX,
        purpose: "an inventoried file",
    };
    match CheckedFile::open_at(directory.as_fd(), Path::new(name), Path::new(&path), limit) {
        Ok(file) => match OpenedFile::new(file.into_file()) {
            Ok(file) => collector.hash(path, file),
            Err(_) => {
                collector.reject(&path, RejectReason::Unreadable);
                Ok(())
            }
        },
        Err(FileError::NotRegular {
            kind: FileKind::Symlink,
            ..
        }) => {
            collector.reject(&path, RejectReason::Symlink);
            Ok(())
        }
        Err(FileError::NotRegular { .. } | FileError::OwnStream { .. }) => {
            collector.reject(&path, RejectReason::SpecialFile);
            Ok(())
        }
        Err(_) => {
            collector.reject(&path, RejectReason::Unreadable);
            Ok(())
        }
    }
}

/// A file being hashed, with its [`Stamp`] from before the first byte was read: it is listed
/// only if the stamp still holds after the last byte, and the bytes add up to its size.
struct OpenedFile {
    file: File,
    opened: Stamp,
}

impl OpenedFile {
    fn new(file: File) -> io::Result<OpenedFile> {
        let opened = Stamp::of(&file)?;
        Ok(OpenedFile { file, opened })
    }
}

impl Read for OpenedFile {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        self.file.read(buffer)
    }
}

impl Content for OpenedFile {
    fn declared_size(&self) -> u64 {
        self.opened.size()
    }

    fn unchanged(&self) -> bool {
        self.opened.holds_for(&self.file)
    }

    fn mismatch(&self) -> RejectReason {
        RejectReason::ChangedWhileReading
    }
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}/{name}")
    }
}
