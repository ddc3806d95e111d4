//! [`Collector`]: hashing entries under the bounds while a walk or an archive read runs. The
//! walk and the archive reader feed it; `collect` runs them and keeps what it collected.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::time::Instant;

use sha2::{Digest, Sha256};

use super::format::{FORMAT_PREFIX_BYTES, detect_format};
use super::ids::{hex, manifest_id_of, occurrence_id_for};
use super::page::{Occurrence, RejectReason, RejectedEntry};
use super::{InventoryError, InventoryLimits, MAX_INVENTORY_DURATION, MAX_PATH_CHARS};
use crate::base::Cancel;

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

/// The bytes of one entry to hash, and what they should amount to.
pub(super) trait Content: Read {
    /// The size the entry has: a file's size when it was opened, an archive entry's declared
    /// uncompressed size.
    fn declared_size(&self) -> u64;

    /// Whether the entry still has the state it had when it was opened, asked once every byte
    /// was read (a file compares `fstat` now with `fstat` then: size and modification time).
    fn unchanged(&self) -> bool;

    /// How the entry is reported when its bytes do not add up to [`Content::declared_size`] or
    /// it changed.
    fn mismatch(&self) -> RejectReason;
}

/// A file's size and modification time, as `fstat` reports them: what must stay the same
/// while it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stamp {
    size: u64,
    modified: (i64, i64),
}

impl Stamp {
    /// The stamp of the open `file` now.
    pub(super) fn of(file: &File) -> io::Result<Stamp> {
        let metadata = file.metadata()?;
        Ok(Stamp {
            size: metadata.len(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
        })
    }

    /// The size.
    pub(super) fn size(self) -> u64 {
        self.size
    }

    /// Whether the open `file` still has this stamp (an `fstat` that fails counts as a change).
    pub(super) fn holds_for(self, file: &File) -> bool {
        Stamp::of(file).is_ok_and(|now| now == self)
    }
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

    /// Hashes one entry read from `content` under the bounds: too large or unreadable entries
    /// are reported, and so is an entry whose bytes do not add up to its declared size or that
    /// changed while it was read ([`Content::mismatch`]), so no digest of a state the entry
    /// never had is listed. Only the total bound is an error.
    pub(super) fn hash(
        &mut self,
        path: String,
        mut content: impl Content,
    ) -> Result<(), InventoryError> {
        let declared_size = content.declared_size();
        if declared_size > self.limits.max_file_bytes {
            self.reject_sized(&path, RejectReason::TooLarge, Some(declared_size));
            return Ok(());
        }
        // One byte past the declared size is enough to tell that there is more.
        let mut reader = (&mut content).take(declared_size.saturating_add(1));
        let mut hasher = Sha256::new();
        let mut prefix = Vec::new();
        let mut size: u64 = 0;
        let mut buffer = vec![0u8; CHUNK_BYTES];
        loop {
            self.check_progress()?;
            let read = match reader.read(&mut buffer) {
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
        if size != declared_size || !content.unchanged() {
            // Shrunk, grew, or was rewritten while it was read (or an archive lied about it):
            // the digest is of no state the entry ever had.
            self.reject(&path, content.mismatch());
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

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    /// Content whose bytes, declared size and later state are chosen by the test.
    struct Fake {
        bytes: Cursor<Vec<u8>>,
        declared_size: u64,
        unchanged: bool,
    }

    impl Read for Fake {
        fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
            self.bytes.read(buffer)
        }
    }

    impl Content for Fake {
        fn declared_size(&self) -> u64 {
            self.declared_size
        }

        fn unchanged(&self) -> bool {
            self.unchanged
        }

        fn mismatch(&self) -> RejectReason {
            RejectReason::ChangedWhileReading
        }
    }

    /// What the collector made of one entry: `Ok(size)` when listed, else the reason.
    fn collect(bytes: usize, declared_size: u64, unchanged: bool) -> Result<u64, RejectReason> {
        let limits = InventoryLimits::default();
        let cancel = Cancel::never();
        let mut collector = Collector::new("root".into(), &limits, &cancel);
        let content = Fake {
            bytes: Cursor::new(vec![7; bytes]),
            declared_size,
            unchanged,
        };
        collector.hash("file".into(), content).unwrap();
        let collected = collector.finish();
        match (&collected.occurrences[..], &collected.rejected[..]) {
            ([occurrence], []) => Ok(occurrence.size),
            ([], [rejected]) => Err(rejected.reason),
            other => panic!("one entry gave {other:?}"),
        }
    }

    #[test]
    fn content_that_does_not_add_up_to_its_size_or_changed_is_never_listed() {
        assert_eq!(collect(100_000, 100_000, true), Ok(100_000));
        assert_eq!(collect(0, 0, true), Ok(0));
        // Truncated while read: fewer bytes than the size when opened.
        assert_eq!(
            collect(40_000, 100_000, true),
            Err(RejectReason::ChangedWhileReading)
        );
        // Grew while read: more bytes than the size when opened.
        assert_eq!(
            collect(100_001, 100_000, true),
            Err(RejectReason::ChangedWhileReading)
        );
        // Rewritten in place: the size holds, the stamp does not.
        assert_eq!(
            collect(100_000, 100_000, false),
            Err(RejectReason::ChangedWhileReading)
        );
    }

    #[test]
    fn content_longer_than_declared_is_read_one_byte_past_its_size() {
        let limits = InventoryLimits::default();
        let cancel = Cancel::never();
        let mut collector = Collector::new("root".into(), &limits, &cancel);
        let content = Fake {
            bytes: Cursor::new(vec![0; 1 << 20]),
            declared_size: 10,
            unchanged: true,
        };
        collector.hash("file".into(), content).unwrap();
        assert_eq!(collector.bytes_hashed, 11);
    }
}
