//! The finished [`Inventory`] of a directory or zip archive, with its pages.

use std::io::{self, Read};
use std::path::Path;

use super::collector::{Collected, Collector, Stamp, as_u64};
use super::page::{
    InventoryPage, InventoryRoot, Occurrence, PagePosition, RejectedEntry, RootKind,
};
use super::{INVENTORY_SCHEMA, INVENTORY_VERSION, InventoryError, InventoryLimits, PageSize};
use crate::base::Cancel;
use crate::base::files::{
    CheckedDirectory, CheckedFile, Confinement, FileError, FileKind, FileLimit,
};
use crate::text::Quoted;

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
    /// [`MAX_INVENTORY_DURATION`](super::MAX_INVENTORY_DURATION). A zip archive whose size or
    /// modification time changes while it is read fails with
    /// [`InventoryError::ChangedWhileReading`].
    pub fn open_with(
        path: &Path,
        limits: &InventoryLimits,
        confinement: &Confinement,
        cancel: &Cancel,
    ) -> Result<Inventory, InventoryError> {
        let label = || Quoted::path(path);
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
        Ok(Inventory::from_collected(root, collector.finish()))
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
                        path: label.as_str().into(),
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
        let file = file.into_file();
        // Entries are checked by their CRC; the archive as a whole by its stamp, so that no
        // inventory mixes entries of two states of the file.
        let opened = Stamp::of(&file).map_err(|source| InventoryError::Unreadable {
            path: root.path.as_str().into(),
            source,
        })?;
        let mut reader = io::BufReader::new(file);
        super::archive::read_zip(&mut reader, &mut collector)?;
        if !opened.holds_for(reader.get_ref()) {
            return Err(InventoryError::ChangedWhileReading {
                path: crate::text::cut(&root.path),
            });
        }
        Ok(Inventory::from_collected(root, collector.finish()))
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
        Ok(Inventory::from_collected(root, collector.finish()))
    }

    fn from_collected(root: InventoryRoot, collected: Collected) -> Inventory {
        Inventory {
            root,
            manifest_id: collected.manifest_id,
            occurrences: collected.occurrences,
            rejected: collected.rejected,
        }
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

fn root_text(path: &Path) -> Result<String, InventoryError> {
    let text = path.to_str().ok_or_else(|| InventoryError::PathNotUtf8 {
        path: Quoted::path(path),
    })?;
    if text.is_empty() {
        return Err(InventoryError::Unreadable {
            path: Quoted::default(),
            source: io::Error::new(io::ErrorKind::NotFound, "empty path"),
        });
    }
    Ok(text.to_owned())
}
