//! Artifact inventory v1 (docs/CONTRACT.md section 10): what a shipped application folder or zip
//! archive contains, file by file, with a content-derived manifest ID.
//!
//! [`Inventory::of_directory`] walks a directory and [`Inventory::of_zip_file`] reads a zip
//! archive; both hash every regular file (SHA-256) and detect its executable format from its
//! first bytes. [`Inventory::page`] cuts the result into [`InventoryPage`]s, the JSON documents
//! that `inventory_artifacts` returns and the session retains as Evidence. [`parse_page`]
//! validates a page against the published schema
//! (`src/schemas/artifact-inventory-v1.schema.json`). [`compare_inventories`] and
//! [`list_occurrences`] work on retained pages only.
//!
//! ```
//! use rea::inventory::{
//!     Inventory, InventoryLimits, PageSize, compare_inventories, parse_page,
//! };
//!
//! let old = tempfile::tempdir().unwrap();
//! let new = tempfile::tempdir().unwrap();
//! std::fs::write(old.path().join("app"), b"\x7fELF version 1").unwrap();
//! std::fs::write(new.path().join("app"), b"\x7fELF version 2").unwrap();
//! let limits = InventoryLimits::default();
//! let before: Vec<_> = Inventory::of_directory(old.path(), &limits).unwrap()
//!     .pages(PageSize::default()).collect();
//! let after: Vec<_> = Inventory::of_directory(new.path(), &limits).unwrap()
//!     .pages(PageSize::default()).collect();
//! // Pages are the JSON documents retained as Evidence.
//! let document = serde_json::to_value(&before[0]).unwrap();
//! assert_eq!(parse_page(&document).unwrap(), before[0]);
//! let diff = compare_inventories(&before, &after).unwrap();
//! assert_eq!(diff.changed[0].path, "app");
//! ```
//!
//! # Safety of the walk
//!
//! - The walk runs relative to directory handles and never follows a symbolic link: the root
//!   is opened once (a link in the root path itself is followed, and the confinement is
//!   checked on the opened handle, see [`crate::base::files::Confinement`]), then every subdirectory is opened with `openat(parent,
//!   name, O_DIRECTORY | O_NOFOLLOW)` and every file with `openat(parent, name, O_NOFOLLOW)`
//!   and `fstat`-checked as a regular file. A link is reported as `symlink`, never followed or
//!   opened; an entry swapped for a link, FIFO or device while the walk runs is reported
//!   (`symlink`, `special_file`) and never read. (`symlink_outside_root`,
//!   `symlink_to_directory` and `dangling_symlink` remain valid in pages made by earlier
//!   versions, which followed links inside the root.)
//! - Archive entries are read into the hasher only, never written to disk. Entries with an
//!   absolute path (`/x`, `\x`, `C:x`) or a `..` component are reported, never read; so are
//!   symbolic-link entries and names with a NUL byte. Names are compared **normalised**:
//!   backslashes are separators, and `.` components, repeated `/` and a trailing `/` are
//!   dropped, so `dup.txt`, `./dup.txt`, `.//dup.txt` and `dup.txt/` are one path. **A path
//!   held by more than one entry of the central directory** (`dup.txt` and `./dup.txt`, or two
//!   entries `dup.txt`) is ambiguous (which one an extractor keeps depends on the tool): none
//!   of them is inventoried, and every one of them is reported as `duplicate_path`, whatever
//!   the order; only directory entries sharing a path merge silently. Nested archives are
//!   inventoried as files (format `zip`), not opened.
//! - **A file that changes while it is hashed** is reported as `changed_while_reading`, never
//!   listed with a digest: its size and modification time (`fstat` of the open file) are taken
//!   before the first byte is read and again after the last, and the bytes read must add up
//!   to that size (at most one byte past it is read). An archive entry whose bytes do not add
//!   up to its declared size, or fail its CRC, is `unreadable`; a zip archive whose size or
//!   modification time changed while it was read fails with
//!   [`InventoryError::ChangedWhileReading`]. (A change that keeps the size and lands in the
//!   same tick of the file system's clock as the previous write cannot be seen this way.)
//! - FIFOs, sockets and devices are reported as `special_file` and never opened.
//! - [`Inventory::open_with`] stops as soon as its [`Cancel`](crate::base::Cancel) is set,
//!   and after [`MAX_INVENTORY_DURATION`] (60 s) with [`InventoryError::TimedOut`]: the whole
//!   inventory fails, nothing partial is returned.
//!
//! # Bounds ([`InventoryLimits`])
//!
//! | bound | default | past it |
//! |---|---|---|
//! | `max_entries` | 100,000 entries seen (files, directories, links, archive entries) | [`InventoryError::TooManyEntries`] |
//! | `max_file_bytes` | 1 GiB per file | the file is reported as `too_large`, not hashed |
//! | `max_total_bytes` | 8 GiB hashed in total | [`InventoryError::TooManyBytes`] |
//! | `max_depth` | 64 directory levels below the root | the directory is reported as `too_deep` |
//! | path length | [`MAX_PATH_CHARS`] characters | reported as `path_too_long` |
//! | time | [`MAX_INVENTORY_DURATION`], 60 seconds | [`InventoryError::TimedOut`] |
//!
//! These errors make the whole inventory fail rather than return a partial one, so a manifest ID
//! always covers everything below the root.
//!
//! # Identifiers
//!
//! - Manifest ID: `man-` and the first 32 lowercase hexadecimal digits (128 bits) of the SHA-256
//!   of, for each occurrence in path order, `path`, a NUL byte, the `sha256` hex digest and a
//!   line feed. It depends only on the paths and contents of the inventoried files: not on the
//!   root's location, its kind (directory or zip), the walk order, rejected entries or paging.
//! - Occurrence ID: `occ-` and the first 32 hexadecimal digits of the SHA-256 of the manifest ID,
//!   a NUL byte and the path. The same file in the same inventory always has the same ID.

mod archive;
mod collect;
mod collector;
mod compare;
mod format;
mod ids;
mod listing;
mod page;
mod walk;

use std::io;

use crate::text::Quoted;

pub use collect::Inventory;
pub use compare::{ChangedOccurrence, CompareError, InventoryDiff, Side, compare_inventories};
pub use format::detect_format;
pub use ids::{manifest_id_of, occurrence_id_for};
pub use listing::{
    ListedOccurrence, OccurrenceFilter, find_occurrence, list_occurrences, manifest_ids,
    valid_pages,
};
pub use page::{
    ExecutableFormat, InvalidPage, InventoryPage, InventoryRoot, Occurrence, PagePosition,
    RejectReason, RejectedEntry, RootKind, parse_page,
};

/// The `schema` field of every inventory page.
pub const INVENTORY_SCHEMA: &str = "rea.artifact-inventory";

/// The `version` field of every inventory page.
pub const INVENTORY_VERSION: u64 = 1;

/// Longest relative path inventoried, in characters.
pub const MAX_PATH_CHARS: usize = 4_096;

/// Largest page size, in occurrences (and in rejected entries).
pub const MAX_PAGE_SIZE: usize = 1_000;

/// Longest one inventory may run (walking, reading and hashing) before it stops with
/// [`InventoryError::TimedOut`]: 60 seconds.
pub const MAX_INVENTORY_DURATION: std::time::Duration = std::time::Duration::from_secs(60);

/// Page size when the caller does not choose one.
pub const DEFAULT_PAGE_SIZE: usize = 200;

/// How much one inventory may read; see the module documentation for what happens past each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InventoryLimits {
    /// Most entries seen (files, directories, links, archive entries).
    pub max_entries: usize,
    /// Largest file hashed, in bytes.
    pub max_file_bytes: u64,
    /// Most bytes hashed over the whole inventory.
    pub max_total_bytes: u64,
    /// Deepest directory descended into, counted from the root's children at depth 1.
    pub max_depth: usize,
}

impl Default for InventoryLimits {
    fn default() -> InventoryLimits {
        InventoryLimits {
            max_entries: 100_000,
            max_file_bytes: 1 << 30,
            max_total_bytes: 8 << 30,
            max_depth: 64,
        }
    }
}

/// A page size from 1 to [`MAX_PAGE_SIZE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PageSize(usize);

impl PageSize {
    /// Checks the range.
    pub fn new(size: usize) -> Result<PageSize, PageSizeError> {
        if (1..=MAX_PAGE_SIZE).contains(&size) {
            Ok(PageSize(size))
        } else {
            Err(PageSizeError { size })
        }
    }

    /// The size.
    pub fn get(self) -> usize {
        self.0
    }
}

impl Default for PageSize {
    fn default() -> PageSize {
        PageSize(DEFAULT_PAGE_SIZE)
    }
}

/// A page size outside 1 to [`MAX_PAGE_SIZE`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("page_size {size} is out of range: give 1 to 1000")]
pub struct PageSizeError {
    /// The size asked for.
    pub size: usize,
}

/// Why an inventory could not be made. The root is named as given, cut to 64 characters
/// ([`Quoted`]).
#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    /// The root cannot be opened or read.
    #[error("cannot read {path:?}: {source}")]
    Unreadable {
        /// The root as given.
        path: Quoted,
        /// What the system said.
        source: io::Error,
    },
    /// The root path is not valid UTF-8, so pages could not name it.
    #[error("the path {path:?} is not valid UTF-8")]
    PathNotUtf8 {
        /// The root, lossily decoded.
        path: Quoted,
    },
    /// A directory inventory was asked of something that is not a directory.
    #[error("{path:?} is not a directory")]
    NotADirectory {
        /// The root as given.
        path: Quoted,
    },
    /// The root is neither a directory nor a regular file.
    #[error("{path:?} is neither a directory nor a zip archive")]
    UnsupportedRoot {
        /// The root as given.
        path: Quoted,
    },
    /// The archive is not a zip archive the reader understands.
    #[error("{path:?} is not a readable zip archive: {reason}")]
    NotAZip {
        /// The root as given.
        path: Quoted,
        /// What the zip reader said.
        reason: String,
    },
    /// More entries than [`InventoryLimits::max_entries`].
    #[error("{path:?} holds more entries than the limit of {limit}; inventory a smaller tree")]
    TooManyEntries {
        /// The root as given.
        path: Quoted,
        /// The bound.
        limit: usize,
    },
    /// The root was refused: outside the allowed roots, one of the server's own streams, or
    /// too large an archive.
    #[error(transparent)]
    File(#[from] crate::base::files::FileError),
    /// The request was cancelled while the inventory ran; nothing was retained.
    #[error("the inventory of {path:?} was cancelled before it finished; nothing was retained")]
    Cancelled {
        /// The root as given.
        path: Quoted,
    },
    /// The inventory ran longer than [`MAX_INVENTORY_DURATION`].
    #[error(
        "the inventory of {path:?} was cut short after {seconds} seconds (the time limit); \
         inventory a smaller tree"
    )]
    TimedOut {
        /// The root as given.
        path: Quoted,
        /// The bound, in seconds.
        seconds: u64,
    },
    /// The zip archive's size or modification time changed while it was read: its entries may
    /// come from two states of the file, so nothing is retained.
    #[error(
        "{path:?} changed while it was read (its size or modification time moved); nothing was \
         retained: inventory it again once it no longer changes"
    )]
    ChangedWhileReading {
        /// The root as given, cut to 64 characters.
        path: String,
    },
    /// More bytes to hash than [`InventoryLimits::max_total_bytes`].
    #[error(
        "{path:?} holds more bytes to hash than the limit of {limit}; inventory a smaller tree"
    )]
    TooManyBytes {
        /// The root as given.
        path: Quoted,
        /// The bound.
        limit: u64,
    },
}
