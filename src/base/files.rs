//! Files that are what they claim to be: checked opening, bounded reading and [`Confinement`].
//!
//! Every file the crate reads (a binary, a catalog, a prompt file, an inventory root, entry or
//! zip archive) is opened here, and checked **after opening, on the descriptor**, never by
//! path beforehand:
//!
//! 1. It is opened with `O_NONBLOCK | O_CLOEXEC | O_NOCTTY`, so a FIFO with no writer does not
//!    block in `open` and a terminal never becomes the controlling one.
//! 2. `fstat` on the descriptor says what it is. Only regular files are read: a FIFO, socket,
//!    character or block device or directory is [`FileError::NotRegular`], naming the path and
//!    what it is. (A socket cannot be opened at all; the failed open is followed by a `stat` of
//!    the path to say so.)
//! 3. A file that is the process's own standard input, output or error (same `st_dev` and
//!    `st_ino` as descriptor 0, 1 or 2, e.g. `/dev/stdin`, `/proc/self/fd/1` or the file stdin
//!    was redirected from) is [`FileError::OwnStream`] and never read.
//! 4. Under a restricting [`Confinement`], the path the descriptor really names (Linux:
//!    `readlink /proc/self/fd/N`) must lie below an allowed root ([`FileError::OutsideRoots`]).
//!    A symbolic link swapped in between a check and the open cannot escape, because the check
//!    is made on what was opened.
//! 5. The size from `fstat` is bounded before any byte is read ([`FileError::TooLarge`]; the
//!    bound depends on the use, see [`FileLimit`]), and at most `st_size` bytes are read, so a
//!    file that claims size 0 (`/proc/kmsg`) is never read and never blocks.
//!
//! The bounds, one per use:
//!
//! | use | constant | bytes |
//! |---|---|---|
//! | a binary (`open_binary`, native provider) | [`MAX_BINARY_BYTES`] | 1 GiB |
//! | a catalog (JSON) | [`MAX_CATALOG_FILE_BYTES`] | 64 MiB |
//! | a prompt file (`--prompt-file`) | [`MAX_PROMPT_FILE_BYTES`] | 64 MiB |
//! | a zip archive inventoried | [`MAX_ARCHIVE_BYTES`] | 8 GiB (read in chunks, never whole) |
//!
//! ```
//! use rea::files::{CheckedFile, Confinement, FileError, FileLimit};
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("app"), b"\x7fELF").unwrap();
//! let confined = Confinement::to_roots([dir.path()]).unwrap();
//! let file = CheckedFile::open(&dir.path().join("app"), &confined, FileLimit::BINARY).unwrap();
//! assert_eq!(file.read_all().unwrap(), b"\x7fELF");
//!
//! // A directory is not a regular file; a path outside the roots is refused.
//! let error = CheckedFile::open(dir.path(), &Confinement::unrestricted(), FileLimit::BINARY);
//! assert!(matches!(error, Err(FileError::NotRegular { .. })));
//! let outside = CheckedFile::open("/etc/hostname".as_ref(), &confined, FileLimit::BINARY);
//! assert!(matches!(outside, Err(FileError::OutsideRoots { .. } | FileError::Open { .. })));
//! ```

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags, Stat};

use crate::text::Quoted;

/// Smallest buffer [`mapped_capacity`] enlarges: 1 MiB.
const MAPPED_FROM_BYTES: usize = 1 << 20;

/// Larger than glibc's largest mmap threshold (32 MiB on 64-bit systems).
const ALWAYS_MAPPED_BYTES: usize = (32 << 20) + 4096;

/// The capacity (in items of `item_bytes`) to reserve for a buffer that will hold `items`.
///
/// glibc's allocator maps an allocation of its own above a threshold that starts at 128 KiB
/// and *rises* to the size of each mapped block freed, up to 32 MiB: after a 9 MiB file buffer
/// is freed, every allocation under 9 MiB comes from the heap, and what the heap frees is kept
/// (the server then held four catalog tables' worth after four opens). A buffer of 1 MiB or
/// more is therefore reserved at more than 32 MiB: it is always mapped, unmapped (returned to
/// the system) when freed, and freeing it never raises the threshold. Only the pages written
/// are resident, so the extra capacity costs address space, not memory. Smaller buffers keep
/// their exact size.
pub(crate) fn mapped_capacity(items: usize, item_bytes: usize) -> usize {
    let bytes = items.saturating_mul(item_bytes.max(1));
    if !(MAPPED_FROM_BYTES..ALWAYS_MAPPED_BYTES).contains(&bytes) {
        items
    } else {
        ALWAYS_MAPPED_BYTES.div_ceil(item_bytes.max(1))
    }
}

/// Largest binary read into memory by the native provider: 1 GiB.
pub const MAX_BINARY_BYTES: u64 = 1 << 30;

/// Largest catalog (JSON) file read: 64 MiB.
pub const MAX_CATALOG_FILE_BYTES: u64 = 64 << 20;

/// Largest prompt file read: 64 MiB.
pub const MAX_PROMPT_FILE_BYTES: u64 = 64 << 20;

/// Largest zip archive inventoried: 8 GiB (it is read in chunks, never held whole).
pub const MAX_ARCHIVE_BYTES: u64 = 8 << 30;

/// The largest size accepted for one use of a file, and the name of that use for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileLimit {
    /// Largest size in bytes.
    pub bytes: u64,
    /// What the file is read as ("a binary", "a catalog", ...).
    pub purpose: &'static str,
}

impl FileLimit {
    /// A binary: [`MAX_BINARY_BYTES`].
    pub const BINARY: FileLimit = FileLimit {
        bytes: MAX_BINARY_BYTES,
        purpose: "a binary",
    };
    /// A catalog: [`MAX_CATALOG_FILE_BYTES`].
    pub const CATALOG: FileLimit = FileLimit {
        bytes: MAX_CATALOG_FILE_BYTES,
        purpose: "a catalog",
    };
    /// A prompt file: [`MAX_PROMPT_FILE_BYTES`].
    pub const PROMPT_FILE: FileLimit = FileLimit {
        bytes: MAX_PROMPT_FILE_BYTES,
        purpose: "a prompt file",
    };
    /// A zip archive to inventory: [`MAX_ARCHIVE_BYTES`].
    pub const ARCHIVE: FileLimit = FileLimit {
        bytes: MAX_ARCHIVE_BYTES,
        purpose: "a zip archive",
    };
}

/// What a path turned out to be, when it is not a regular file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// A FIFO (named pipe) or pipe.
    Fifo,
    /// A Unix domain socket.
    Socket,
    /// A character device (terminals, `/dev/null`, `/dev/zero`, ...).
    CharacterDevice,
    /// A block device (disks).
    BlockDevice,
    /// A symbolic link (only seen when links are not followed).
    Symlink,
    /// Something else.
    Unknown,
}

impl FileKind {
    fn of(stat: &Stat) -> FileKind {
        FileKind::of_type(FileType::from_raw_mode(stat.st_mode))
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::Regular => "a regular file",
            FileKind::Directory => "a directory",
            FileKind::Fifo => "a FIFO (named pipe)",
            FileKind::Socket => "a socket",
            FileKind::CharacterDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Symlink => "a symbolic link",
            FileKind::Unknown => "a special file",
        })
    }
}

/// Which standard stream of this process a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnStream {
    /// Descriptor 0.
    Stdin,
    /// Descriptor 1.
    Stdout,
    /// Descriptor 2.
    Stderr,
}

impl fmt::Display for OwnStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OwnStream::Stdin => "standard input",
            OwnStream::Stdout => "standard output",
            OwnStream::Stderr => "standard error",
        })
    }
}

/// Why a file was not opened or read. Every message names the path as the caller gave it, cut
/// to 64 characters ([`Quoted`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The system refused to open it (missing, permissions, ...).
    #[error("cannot read {path}: {source}")]
    Open {
        /// The path as given.
        path: Quoted,
        /// What the system said.
        source: io::Error,
    },
    /// It is not a regular file (or, where a directory was wanted, not a directory).
    #[error("{path} is {kind}, not {wanted}, so it is not opened")]
    NotRegular {
        /// The path as given.
        path: Quoted,
        /// What it is.
        kind: FileKind,
        /// What was wanted ("a regular file" or "a directory").
        wanted: &'static str,
    },
    /// It is this server's own standard input, output or error.
    #[error("{path} is this server's own {stream}; it is never read")]
    OwnStream {
        /// The path as given.
        path: Quoted,
        /// Which stream.
        stream: OwnStream,
    },
    /// It is larger than the bound for this use.
    #[error("{path} is {size} bytes, over the limit of {limit} bytes for {purpose}")]
    TooLarge {
        /// The path as given.
        path: Quoted,
        /// Its size.
        size: u64,
        /// The bound.
        limit: u64,
        /// The use.
        purpose: &'static str,
    },
    /// It lies outside every allowed root.
    #[error(
        "{path} is outside the allowed roots ({}); only files below them may be opened",
        super::notices::list_roots(roots)
    )]
    OutsideRoots {
        /// The path as given.
        path: Quoted,
        /// The allowed roots.
        roots: Vec<PathBuf>,
    },
    /// The path the descriptor names could not be found, so confinement cannot be checked.
    #[error(
        "cannot tell where {path} really is, so it is refused under the allowed roots: {source}"
    )]
    Unlocatable {
        /// The path as given.
        path: Quoted,
        /// What the system said.
        source: io::Error,
    },
    /// Reading failed.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The path as given.
        path: Quoted,
        /// What the system said.
        source: io::Error,
    },
    /// An allowed root could not be resolved.
    #[error("cannot use {path} as an allowed root: {source}")]
    BadRoot {
        /// The root as given.
        path: Quoted,
        /// What the system said.
        source: io::Error,
    },
}

/// Which paths the tools may touch: anything readable ([`Confinement::unrestricted`], the
/// default), or only what lies below a set of allowed root directories
/// ([`Confinement::to_roots`], canonicalised when set). The check is made on opened
/// descriptors (see the [module documentation](self)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Confinement {
    roots: Option<Vec<PathBuf>>,
}

impl Confinement {
    /// Any readable path may be opened.
    pub fn unrestricted() -> Confinement {
        Confinement { roots: None }
    }

    /// Only paths below one of `roots` (each canonicalised now; an empty list allows nothing).
    pub fn to_roots<P: AsRef<Path>>(
        roots: impl IntoIterator<Item = P>,
    ) -> Result<Confinement, FileError> {
        let mut resolved: Vec<PathBuf> = Vec::new();
        for root in roots {
            let root = root.as_ref();
            let canonical = std::fs::canonicalize(root).map_err(|source| FileError::BadRoot {
                path: root.into(),
                source,
            })?;
            if !resolved.contains(&canonical) {
                resolved.push(canonical);
            }
        }
        Ok(Confinement {
            roots: Some(resolved),
        })
    }

    /// This confinement narrowed to a client's `roots`: each root that exists is canonicalised
    /// and kept where this confinement allows it; a root that contains one of this
    /// confinement's roots keeps that root instead. Roots that do not exist are left out, and
    /// an empty list allows nothing.
    pub fn narrowed_to<P: AsRef<Path>>(&self, roots: impl IntoIterator<Item = P>) -> Confinement {
        let mut kept: Vec<PathBuf> = Vec::new();
        for root in roots {
            let Ok(canonical) = std::fs::canonicalize(root.as_ref()) else {
                continue;
            };
            let narrowed: Vec<PathBuf> = match &self.roots {
                None => vec![canonical],
                Some(_) if self.allows(&canonical) => vec![canonical],
                Some(own) => own
                    .iter()
                    .filter(|own| own.starts_with(&canonical))
                    .cloned()
                    .collect(),
            };
            for root in narrowed {
                if !kept.contains(&root) {
                    kept.push(root);
                }
            }
        }
        Confinement { roots: Some(kept) }
    }

    /// The allowed roots, or `None` when unrestricted.
    pub fn roots(&self) -> Option<&[PathBuf]> {
        self.roots.as_deref()
    }

    /// Whether a canonical path lies at or below an allowed root.
    pub fn allows(&self, canonical: &Path) -> bool {
        self.roots
            .as_ref()
            .is_none_or(|roots| roots.iter().any(|root| canonical.starts_with(root)))
    }

    /// Checks the path an opened descriptor really names.
    pub fn check_descriptor(&self, fd: BorrowedFd<'_>, path: &Path) -> Result<(), FileError> {
        let Some(roots) = &self.roots else {
            return Ok(());
        };
        let real = real_path(fd).map_err(|source| FileError::Unlocatable {
            path: path.into(),
            source,
        })?;
        if self.allows(&real) {
            Ok(())
        } else {
            super::notices::note(super::notices::Notice::ConfinementRefused {
                path: path.into(),
                roots: roots.clone(),
            });
            Err(FileError::OutsideRoots {
                path: path.into(),
                roots: roots.clone(),
            })
        }
    }
}

/// The path an open descriptor names, from `/proc/self/fd`.
fn real_path(fd: BorrowedFd<'_>) -> io::Result<PathBuf> {
    use std::os::fd::AsRawFd;
    let link = format!("/proc/self/fd/{}", fd.as_raw_fd());
    let target = std::fs::read_link(link)?;
    if !target.is_absolute() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "the descriptor does not name a path",
        ));
    }
    Ok(target)
}

/// The flags every open uses.
fn base_flags() -> OFlags {
    OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY
}

/// Which of descriptors 0, 1, 2 has the same device and inode as `stat`.
fn own_stream(stat: &Stat) -> Option<OwnStream> {
    let same = |other: io::Result<Stat>| {
        other.is_ok_and(|other| other.st_dev == stat.st_dev && other.st_ino == stat.st_ino)
    };
    if same(rustix::fs::fstat(io::stdin().as_fd()).map_err(io::Error::from)) {
        Some(OwnStream::Stdin)
    } else if same(rustix::fs::fstat(io::stdout().as_fd()).map_err(io::Error::from)) {
        Some(OwnStream::Stdout)
    } else if same(rustix::fs::fstat(io::stderr().as_fd()).map_err(io::Error::from)) {
        Some(OwnStream::Stderr)
    } else {
        None
    }
}

/// When an open failed, what the path is (a socket cannot be opened; say so).
fn open_error(path: &Path, error: rustix::io::Errno, wanted: &'static str) -> FileError {
    if let Ok(stat) = rustix::fs::stat(path) {
        let kind = FileKind::of(&stat);
        if !matches!(kind, FileKind::Regular | FileKind::Directory) {
            return FileError::NotRegular {
                path: path.into(),
                kind,
                wanted,
            };
        }
    }
    FileError::Open {
        path: path.into(),
        source: error.into(),
    }
}

/// A regular file, opened and checked (see the [module documentation](self)): reading it
/// returns at most the size `fstat` reported.
#[derive(Debug)]
pub struct CheckedFile {
    file: File,
    path: PathBuf,
    size: u64,
}

impl CheckedFile {
    /// Opens `path` (following links in the path; the check is on what was opened) and checks
    /// it: regular, not one of this process's standard streams, inside `confinement`, at most
    /// `limit` bytes.
    pub fn open(
        path: &Path,
        confinement: &Confinement,
        limit: FileLimit,
    ) -> Result<CheckedFile, FileError> {
        let fd = rustix::fs::open(path, base_flags(), Mode::empty())
            .map_err(|error| open_error(path, error, "a regular file"))?;
        confinement.check_descriptor(fd.as_fd(), path)?;
        CheckedFile::check(fd, path.to_owned(), limit)
    }

    /// Opens the entry `name` of the directory `directory` without following a link
    /// (`openat` with `O_NOFOLLOW`), and checks it like [`CheckedFile::open`]; `path` names it
    /// in messages. No confinement check is needed: the directory handle already confines it.
    pub fn open_at(
        directory: BorrowedFd<'_>,
        name: &Path,
        path: &Path,
        limit: FileLimit,
    ) -> Result<CheckedFile, FileError> {
        let fd = rustix::fs::openat(
            directory,
            name,
            base_flags() | OFlags::NOFOLLOW,
            Mode::empty(),
        )
        .map_err(|error| {
            if error == rustix::io::Errno::LOOP {
                FileError::NotRegular {
                    path: path.into(),
                    kind: FileKind::Symlink,
                    wanted: "a regular file",
                }
            } else {
                FileError::Open {
                    path: path.into(),
                    source: error.into(),
                }
            }
        })?;
        CheckedFile::check(fd, path.to_owned(), limit)
    }

    fn check(fd: OwnedFd, path: PathBuf, limit: FileLimit) -> Result<CheckedFile, FileError> {
        let stat = rustix::fs::fstat(&fd).map_err(|error| FileError::Open {
            path: path.as_path().into(),
            source: error.into(),
        })?;
        let kind = FileKind::of(&stat);
        if kind != FileKind::Regular {
            return Err(FileError::NotRegular {
                path: path.as_path().into(),
                kind,
                wanted: "a regular file",
            });
        }
        if let Some(stream) = own_stream(&stat) {
            return Err(FileError::OwnStream {
                path: path.as_path().into(),
                stream,
            });
        }
        let size = u64::try_from(stat.st_size).unwrap_or(0);
        if size > limit.bytes {
            return Err(FileError::TooLarge {
                path: path.as_path().into(),
                size,
                limit: limit.bytes,
                purpose: limit.purpose,
            });
        }
        Ok(CheckedFile {
            file: File::from(fd),
            path,
            size,
        })
    }

    /// The size `fstat` reported when it was opened.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The path the opened descriptor names (from `/proc/self/fd`), where the system says.
    pub fn real_path(&self) -> Option<PathBuf> {
        real_path(self.file.as_fd()).ok()
    }

    /// The path as given when it was opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the whole file: at most [`CheckedFile::size`] bytes (fewer if it shrank).
    pub fn read_all(mut self) -> Result<Vec<u8>, FileError> {
        let mut bytes = Vec::new();
        self.read_more(&mut bytes, self.size)?;
        Ok(bytes)
    }

    /// Appends up to `count` more bytes to `bytes`, never reading past the size `fstat`
    /// reported; returns how many were read.
    pub fn read_more(&mut self, bytes: &mut Vec<u8>, count: u64) -> Result<usize, FileError> {
        let already = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        let left = self.size.saturating_sub(already).min(count);
        let before = bytes.len();
        // One allocation of the exact size: growing by doubling would reserve up to twice the
        // file and copy it on the way.
        let wanted = before.saturating_add(usize::try_from(left).unwrap_or(0));
        bytes.reserve_exact(mapped_capacity(wanted, 1).saturating_sub(before));
        (&self.file)
            .take(left)
            .read_to_end(bytes)
            .map_err(|source| FileError::Read {
                path: self.path.as_path().into(),
                source,
            })?;
        Ok(bytes.len() - before)
    }

    /// The open file, for chunked reading (a reader bounded to [`CheckedFile::size`]).
    pub fn into_reader(self) -> io::Take<File> {
        let size = self.size;
        self.file.take(size)
    }

    /// The open file itself (seekable, for archives): callers bound their own reads.
    pub fn into_file(self) -> File {
        self.file
    }
}

/// A directory, opened and checked: the handle a walk reads entries relative to.
#[derive(Debug)]
pub struct CheckedDirectory {
    fd: OwnedFd,
}

impl CheckedDirectory {
    /// Opens `path` as a directory (following links in the path; the check is on what was
    /// opened) and checks it against `confinement`.
    pub fn open(path: &Path, confinement: &Confinement) -> Result<CheckedDirectory, FileError> {
        let fd = rustix::fs::open(path, base_flags() | OFlags::DIRECTORY, Mode::empty()).map_err(
            |error| {
                if error == rustix::io::Errno::NOTDIR {
                    let kind =
                        rustix::fs::stat(path).map_or(FileKind::Unknown, |s| FileKind::of(&s));
                    FileError::NotRegular {
                        path: path.into(),
                        kind,
                        wanted: "a directory",
                    }
                } else {
                    open_error(path, error, "a directory")
                }
            },
        )?;
        confinement.check_descriptor(fd.as_fd(), path)?;
        Ok(CheckedDirectory { fd })
    }

    /// Opens the subdirectory `name` without following a link (`O_NOFOLLOW | O_DIRECTORY`).
    pub fn open_at(&self, name: &Path) -> io::Result<CheckedDirectory> {
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            base_flags() | OFlags::DIRECTORY | OFlags::NOFOLLOW,
            Mode::empty(),
        )?;
        Ok(CheckedDirectory { fd })
    }

    /// The handle.
    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// The entries (names other than `.` and `..`, with the type the directory reports, not
    /// followed), at most `max` of them: a caller bounding entries sees that more exist when
    /// it gets `max`.
    pub fn entries(&self, max: usize) -> io::Result<Vec<(std::ffi::OsString, FileKind)>> {
        use std::os::unix::ffi::OsStrExt;
        let dup = rustix::io::dup(&self.fd)?;
        let mut dir = rustix::fs::Dir::new(dup)?;
        let mut entries = Vec::new();
        while entries.len() < max
            && let Some(entry) = dir.read()
        {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => rustix::fs::statat(
                    &self.fd,
                    entry.file_name(),
                    rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
                )
                .map_or(FileKind::Unknown, |stat| FileKind::of(&stat)),
                other => FileKind::of_type(other),
            };
            entries.push((std::ffi::OsStr::from_bytes(name).to_owned(), kind));
        }
        Ok(entries)
    }
}

impl FileKind {
    fn of_type(file_type: FileType) -> FileKind {
        match file_type {
            FileType::RegularFile => FileKind::Regular,
            FileType::Directory => FileKind::Directory,
            FileType::Fifo => FileKind::Fifo,
            FileType::Socket => FileKind::Socket,
            FileType::CharacterDevice => FileKind::CharacterDevice,
            FileType::BlockDevice => FileKind::BlockDevice,
            FileType::Symlink => FileKind::Symlink,
            FileType::Unknown => FileKind::Unknown,
        }
    }
}
