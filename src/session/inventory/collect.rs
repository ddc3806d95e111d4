//! Hashing entries under the bounds, and the finished [`Inventory`] with its pages.

use std::io::{self, Read};
use std::path::Path;
use std::time::Instant;

use sha2::{Digest, Sha256};

use super::format::{FORMAT_PREFIX_BYTES, detect_format};
use super::ids::{hex, manifest_id_of, occurrence_id_for};
use super::page::{
    InventoryPage, InventoryRoot, Occurrence, PagePosition, RejectReason, RejectedEntry, RootKind,
};
use super::{
    INVENTORY_SCHEMA, INVENTORY_VERSION, InventoryError, InventoryLimits, MAX_INVENTORY_DURATION,
    MAX_PATH_CHARS, PageSize,
};
use crate::session::Cancel;
use crate::session::files::{
    CheckedDirectory, CheckedFile, Confinement, FileError, FileKind, FileLimit,
};

/// Read buffer for hashing.
const CHUNK_BYTES: usize = 64 * 1024;

/// A finished inventory of a directory or zip archive, held in memory; [`Inventory::page`]
/// renders its pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inventory {
    root: InventoryRoot,
    manifest_id: String,
    occurrences: Vec<Occurrence>,
    rejected: Vec<RejectedEntry>,
}

impl Inventory {
    /// Inventories `path`: a directory tree, or else a zip archive file. Any readable path may
    /// be inventoried and the walk cannot be cancelled; see [`Inventory::open_with`].
    pub fn open(path: &Path, limits: &InventoryLimits) -> Result<Inventory, InventoryError> {
        Inventory::open_with(path, limits, &Confinement::unrestricted(), &Cancel::never())
    }

    /// Inventories `path` (a directory tree, or else a zip archive file) under `confinement`,
    /// stopping with [`InventoryError::Cancelled`] as soon as `cancel` is set (checked before
    /// every entry and every 64 KiB hashed) and with [`InventoryError::TimedOut`] after
    /// [`MAX_INVENTORY_DURATION`].
    pub fn open_with(
        path: &Path,
        limits: &InventoryLimits,
        confinement: &Confinement,
        cancel: &Cancel,
    ) -> Result<Inventory, InventoryError> {
        let label = || path.to_string_lossy().into_owned();
        match CheckedDirectory::open(path, confinement) {
            Ok(_) => Inventory::walk(path, limits, confinement, cancel),
            Err(FileError::NotRegular {
                kind: FileKind::Regular,
                ..
            }) => Inventory::zip_file(path, limits, confinement, cancel),
            Err(FileError::NotRegular { .. }) => {
                Err(InventoryError::UnsupportedRoot { path: label() })
            }
            Err(FileError::Open { source, .. }) => Err(InventoryError::Unreadable {
                path: label(),
                source,
            }),
            Err(other) => Err(InventoryError::File(other)),
        }
    }

    /// Inventories the directory tree at `path` (see the module documentation for the rules).
    pub fn of_directory(
        path: &Path,
        limits: &InventoryLimits,
    ) -> Result<Inventory, InventoryError> {
        Inventory::walk(path, limits, &Confinement::unrestricted(), &Cancel::never())
    }

    fn walk(
        path: &Path,
        limits: &InventoryLimits,
        confinement: &Confinement,
        cancel: &Cancel,
    ) -> Result<Inventory, InventoryError> {
        let root = InventoryRoot {
            kind: RootKind::Directory,
            path: root_text(path)?,
        };
        let mut collector = Collector::new(root.path.clone(), limits, cancel);
        super::walk::walk(path, confinement, &mut collector)?;
        Ok(collector.finish(root))
    }

    /// Inventories the zip archive at `path` without extracting it.
    pub fn of_zip_file(path: &Path, limits: &InventoryLimits) -> Result<Inventory, InventoryError> {
        Inventory::zip_file(path, limits, &Confinement::unrestricted(), &Cancel::never())
    }

    fn zip_file(
        path: &Path,
        limits: &InventoryLimits,
        confinement: &Confinement,
        cancel: &Cancel,
    ) -> Result<Inventory, InventoryError> {
        let label = root_text(path)?;
        let file =
            CheckedFile::open(path, confinement, FileLimit::ARCHIVE).map_err(
                |error| match error {
                    FileError::Open { source, .. } => InventoryError::Unreadable {
                        path: label.clone(),
                        source,
                    },
                    other => InventoryError::File(other),
                },
            )?;
        let root = InventoryRoot {
            kind: RootKind::Zip,
            path: label,
        };
        let mut collector = Collector::new(root.path.clone(), limits, cancel);
        let reader = io::BufReader::new(file.into_file());
        super::archive::read_zip(reader, &mut collector)?;
        Ok(collector.finish(root))
    }

    /// Inventories a zip archive read from `reader`; `label` becomes the page's `root.path`.
    pub fn of_zip_reader<R: Read + io::Seek>(
        reader: R,
        label: &str,
        limits: &InventoryLimits,
    ) -> Result<Inventory, InventoryError> {
        let root = InventoryRoot {
            kind: RootKind::Zip,
            path: label.to_owned(),
        };
        let cancel = Cancel::never();
        let mut collector = Collector::new(root.path.clone(), limits, &cancel);
        super::archive::read_zip(reader, &mut collector)?;
        Ok(collector.finish(root))
    }

    /// The root it covers.
    pub fn root(&self) -> &InventoryRoot {
        &self.root
    }

    /// Its manifest ID.
    pub fn manifest_id(&self) -> &str {
        &self.manifest_id
    }

    /// Every occurrence, in path order.
    pub fn occurrences(&self) -> &[Occurrence] {
        &self.occurrences
    }

    /// Every rejected entry, in path order.
    pub fn rejected(&self) -> &[RejectedEntry] {
        &self.rejected
    }

    /// Number of pages of `size`: enough for every occurrence and every rejected entry, and at
    /// least one.
    pub fn page_count(&self, size: PageSize) -> usize {
        let longer = self.occurrences.len().max(self.rejected.len());
        longer.div_ceil(size.get()).max(1)
    }

    /// Page `index` (from 0) of pages of `size`; `None` past the last page.
    pub fn page(&self, index: usize, size: PageSize) -> Option<InventoryPage> {
        let count = self.page_count(size);
        if index >= count {
            return None;
        }
        let window = |len: usize| {
            let start = index.saturating_mul(size.get()).min(len);
            start..start.saturating_add(size.get()).min(len)
        };
        Some(InventoryPage {
            schema: INVENTORY_SCHEMA.to_owned(),
            version: INVENTORY_VERSION,
            manifest_id: self.manifest_id.clone(),
            root: self.root.clone(),
            page: PagePosition {
                index: as_u64(index),
                count: as_u64(count),
                size: as_u64(size.get()),
                total_occurrences: as_u64(self.occurrences.len()),
                total_rejected: as_u64(self.rejected.len()),
            },
            occurrences: self.occurrences[window(self.occurrences.len())].to_vec(),
            rejected: self.rejected[window(self.rejected.len())].to_vec(),
        })
    }

    /// Every page of `size`, in order.
    pub fn pages(&self, size: PageSize) -> impl Iterator<Item = InventoryPage> + '_ {
        (0..self.page_count(size)).filter_map(move |index| self.page(index, size))
    }
}

fn as_u64(value: usize) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}

fn root_text(path: &Path) -> Result<String, InventoryError> {
    let text = path.to_str().ok_or_else(|| InventoryError::PathNotUtf8 {
        path: path.to_string_lossy().into_owned(),
    })?;
    if text.is_empty() {
        return Err(InventoryError::Unreadable {
            path: String::new(),
            source: io::Error::new(io::ErrorKind::NotFound, "empty path"),
        });
    }
    Ok(text.to_owned())
}

/// A hashed file before its occurrence ID is known.
struct HashedFile {
    path: String,
    size: u64,
    sha256: String,
    prefix: Vec<u8>,
}

/// Accumulates entries while a walk or archive read runs, enforcing the bounds.
pub(super) struct Collector<'a> {
    root_path: String,
    pub(super) limits: &'a InventoryLimits,
    cancel: &'a Cancel,
    started: Instant,
    entries_seen: usize,
    bytes_hashed: u64,
    files: Vec<HashedFile>,
    rejected: Vec<RejectedEntry>,
}

impl<'a> Collector<'a> {
    fn new(root_path: String, limits: &'a InventoryLimits, cancel: &'a Cancel) -> Collector<'a> {
        Collector {
            root_path,
            limits,
            cancel,
            started: Instant::now(),
            entries_seen: 0,
            bytes_hashed: 0,
            files: Vec::new(),
            rejected: Vec::new(),
        }
    }

    /// The root as the caller named it.
    pub(super) fn root_path(&self) -> &str {
        &self.root_path
    }

    /// Counts one more entry seen.
    pub(super) fn count_entry(&mut self) -> Result<(), InventoryError> {
        self.entries_seen += 1;
        if self.entries_seen > self.limits.max_entries {
            return Err(self.too_many_entries());
        }
        Ok(())
    }

    /// How many more entries may be seen, plus one (so seeing them all trips the bound).
    pub(super) fn entries_left(&self) -> usize {
        self.limits
            .max_entries
            .saturating_sub(self.entries_seen)
            .saturating_add(1)
    }

    /// Stops the work when it was cancelled or has run past [`MAX_INVENTORY_DURATION`].
    pub(super) fn check_progress(&self) -> Result<(), InventoryError> {
        if self.cancel.is_cancelled() {
            return Err(InventoryError::Cancelled {
                path: self.root_path.clone(),
            });
        }
        if self.started.elapsed() > MAX_INVENTORY_DURATION {
            return Err(InventoryError::TimedOut {
                path: self.root_path.clone(),
                seconds: MAX_INVENTORY_DURATION.as_secs(),
            });
        }
        Ok(())
    }

    pub(super) fn too_many_entries(&self) -> InventoryError {
        InventoryError::TooManyEntries {
            path: self.root_path.clone(),
            limit: self.limits.max_entries,
        }
    }

    /// Reports an entry that is not inventoried.
    pub(super) fn reject(&mut self, path: &str, reason: RejectReason) {
        self.reject_sized(path, reason, None);
    }

    fn reject_sized(&mut self, path: &str, reason: RejectReason, size: Option<u64>) {
        self.rejected.push(RejectedEntry {
            path: path.chars().take(MAX_PATH_CHARS).collect(),
            reason,
            size,
        });
    }

    /// Hashes one file of `declared_size` bytes read from `content` under the bounds: too large
    /// or unreadable files are reported; only the total bound is an error.
    pub(super) fn hash(
        &mut self,
        path: String,
        declared_size: u64,
        content: impl Read,
    ) -> Result<(), InventoryError> {
        let limit = self.limits.max_file_bytes;
        if declared_size > limit {
            self.reject_sized(&path, RejectReason::TooLarge, Some(declared_size));
            return Ok(());
        }
        let mut content = content.take(limit.saturating_add(1));
        let mut hasher = Sha256::new();
        let mut prefix = Vec::new();
        let mut size: u64 = 0;
        let mut buffer = vec![0u8; CHUNK_BYTES];
        loop {
            self.check_progress()?;
            let read = match content.read(&mut buffer) {
                Ok(0) => break,
                Ok(read) => read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.reject(&path, RejectReason::Unreadable);
                    return Ok(());
                }
            };
            let chunk = &buffer[..read];
            size += as_u64(read);
            self.bytes_hashed += as_u64(read);
            if self.bytes_hashed > self.limits.max_total_bytes {
                return Err(InventoryError::TooManyBytes {
                    path: self.root_path.clone(),
                    limit: self.limits.max_total_bytes,
                });
            }
            if prefix.len() < FORMAT_PREFIX_BYTES {
                let wanted = (FORMAT_PREFIX_BYTES - prefix.len()).min(read);
                prefix.extend_from_slice(&chunk[..wanted]);
            }
            hasher.update(chunk);
        }
        if size > limit {
            // The file grew past the bound while it was read (or an archive lied about it).
            self.reject_sized(&path, RejectReason::TooLarge, Some(size));
            return Ok(());
        }
        self.files.push(HashedFile {
            path,
            size,
            sha256: hex(&hasher.finalize()),
            prefix,
        });
        Ok(())
    }

    fn finish(mut self, root: InventoryRoot) -> Inventory {
        self.files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        self.rejected.sort_unstable();
        let manifest_id = manifest_id_of(
            self.files
                .iter()
                .map(|file| (file.path.as_str(), file.sha256.as_str())),
        );
        let occurrences = self
            .files
            .into_iter()
            .map(|file| Occurrence {
                occurrence_id: occurrence_id_for(&manifest_id, &file.path),
                format: detect_format(&file.prefix),
                path: file.path,
                size: file.size,
                sha256: file.sha256,
            })
            .collect();
        Inventory {
            root,
            manifest_id,
            occurrences,
            rejected: self.rejected,
        }
    }
}
