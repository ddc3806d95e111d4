//! [`Collector`]: hashing entries under the bounds while a walk or an archive read runs. The
//! walk and the archive reader feed it; `collect` runs them and keeps what it collected.

use std::io::{self, Read};
use std::time::Instant;

use sha2::{Digest, Sha256};

use super::format::{FORMAT_PREFIX_BYTES, detect_format};
use super::ids::{hex, manifest_id_of, occurrence_id_for};
use super::page::{Occurrence, RejectReason, RejectedEntry};
use super::{InventoryError, InventoryLimits, MAX_INVENTORY_DURATION, MAX_PATH_CHARS};
use crate::session::Cancel;

/// Read buffer for hashing.
const CHUNK_BYTES: usize = 64 * 1024;

/// What a [`Collector`] collected, sorted.
pub(super) struct Collected {
    /// The manifest ID of the files.
    pub(super) manifest_id: String,
    /// The files, in path order.
    pub(super) occurrences: Vec<Occurrence>,
    /// The rejected entries, sorted.
    pub(super) rejected: Vec<RejectedEntry>,
}

pub(super) fn as_u64(value: usize) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
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
    pub(super) fn new(
        root_path: String,
        limits: &'a InventoryLimits,
        cancel: &'a Cancel,
    ) -> Collector<'a> {
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
                path: self.root_path.as_str().into(),
            });
        }
        if self.started.elapsed() > MAX_INVENTORY_DURATION {
            return Err(InventoryError::TimedOut {
                path: self.root_path.as_str().into(),
                seconds: MAX_INVENTORY_DURATION.as_secs(),
            });
        }
        Ok(())
    }

    pub(super) fn too_many_entries(&self) -> InventoryError {
        InventoryError::TooManyEntries {
            path: self.root_path.as_str().into(),
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
                    path: self.root_path.as_str().into(),
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

    /// The sorted occurrences and rejections, and the manifest ID they give.
    pub(super) fn finish(mut self) -> Collected {
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
        Collected {
            manifest_id,
            occurrences,
            rejected: self.rejected,
        }
    }
}
