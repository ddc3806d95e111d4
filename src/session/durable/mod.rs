//! The durable store of investigations (docs/CONTRACT.md section 15): what outlives the
//! process that serves it.
//!
//! - [`Durable`]: the trait a store implements. A session's changes reach it as a batch of
//!   [`Change`]s that [`Durable::commit`] writes as one transaction, synced before it returns,
//!   so a change is on the disk *before* the answer that reports it is written.
//!   [`Durable::load`] gives back every open session ([`StoredSession`]) at start-up, and
//!   [`Durable::binary`] the bytes of a binary by its SHA-256.
//! - [`SqliteStore`]: the default, one SQLite file in WAL mode with `synchronous=FULL`.
//! - [`PostgresStore`]: a PostgreSQL database several `rea serve --http` instances share
//!   (a team server): every instance serves every session.
//! - [`MemoryStore`]: nothing on the disk (`rea serve --store memory`, tests, library users).
//!
//! The store is written to only by the session layer ([`crate::session::Session`] commits
//! each change here before it applies it to its in-memory state) and read only at resume:
//! completion and the tools read the in-memory projection, never the store. The pure core
//! never sees it.
//!
//! A row read back is untrusted input: [`rows`] decodes it with the ledger's bounds and
//! refuses what does not fit.

pub mod lease;
mod memory;
pub mod postgres;
pub mod rows;
mod sqlite;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::evidence::EvidenceRecord;
use crate::annotations::Annotation;
use crate::unknowns::Unknown;

pub use memory::MemoryStore;
pub use postgres::{
    CALL_BOUND, LEASE_SECONDS, POSTGRES_SCHEMA_VERSION, PostgresOptions, PostgresStore,
};
pub use rows::{RowError, TaskRow};
pub use sqlite::{
    DEFAULT_MAX_STORE_MIB, DEFAULT_RETENTION_DAYS, SCHEMA_VERSION, SqliteStore, StoreOptions,
};

/// A store of investigations: sessions, the bytes of their binaries, their Evidence ledgers
/// and residual unknowns (see the [module documentation](self)).
///
/// # Implementing another backend
///
/// A backend keeps, per session handle, the [`StoredBinary`] of [`Change::Open`], the records
/// of [`Change::Record`] (by Evidence ID), and the latest state of each revision of
/// [`Change::Unknown`] (by unknown ID), the revisions of [`Change::Annotation`] (by annotation
/// ID); [`Change::Close`] forgets the session, and the bytes
/// of its binary when no other session uses them. `commit` applies a whole batch or nothing,
/// and returns only once the batch would survive a crash. The numbering
/// ([`Snapshot::next_evidence`], [`Snapshot::next_unknown`],
/// [`Snapshot::next_annotation`]) is one past the highest number
/// any committed record or revision ever had, closed sessions included.
pub trait Durable: Send + Sync + fmt::Debug {
    /// Applies `changes` to the session `handle` as one transaction, synced before it returns.
    fn commit(&self, handle: &str, changes: &[Change<'_>]) -> Result<(), DurableError>;

    /// Every session the store holds, with its records and revisions, and the numbering.
    fn load(&self) -> Result<Snapshot, DurableError>;

    /// The bytes of the binary whose SHA-256 is `sha256`, if the store keeps them.
    fn binary(&self, sha256: &str) -> Result<Option<Vec<u8>>, DurableError>;

    /// Whether [`Change::Open`] should carry the binary's bytes (`--store-binaries`).
    fn keeps_binaries(&self) -> bool;

    /// What the store is, for messages: its path, or `memory`.
    fn describe(&self) -> String;

    /// Takes the lease of session `handle` for this process (see [`lease`]): a store that
    /// several processes share serves each session from one of them at a time. Fails with
    /// [`DurableError::Held`] while another live process holds it. The default is for a store
    /// only this process uses: it is always held already.
    fn acquire(&self, handle: &str) -> Result<Acquired, DurableError> {
        let _ = handle;
        Ok(Acquired::AlreadyHeld)
    }

    /// The session `handle` as the store holds it now (another process may have changed it
    /// since [`Durable::load`]), or `None` when the store has no such session. The default,
    /// for a store only this process uses, has nothing newer than what was loaded.
    fn load_session(&self, handle: &str) -> Result<Option<StoredSession>, DurableError> {
        let _ = handle;
        Ok(None)
    }

    /// Whether every process on this store may serve every session at once (PostgreSQL, a
    /// team server): then a session is read afresh whenever [`Durable::changed_since`] says
    /// another process changed it, and an Evidence number comes from
    /// [`Durable::issue_evidence_number`]. The default, for SQLite and memory, is `false`.
    fn serves_any(&self) -> bool {
        false
    }

    /// Whether another process changed session `handle` since this one last read or wrote it
    /// (one cheap read, on a store that [`Durable::serves_any`]). The default is `false`.
    fn changed_since(&self, handle: &str) -> Result<bool, DurableError> {
        let _ = handle;
        Ok(false)
    }

    /// An Evidence number the store issues, unique across every process on it and higher
    /// than any it issued before, or `None` when the process's own numbering serves (the
    /// default).
    fn issue_evidence_number(&self) -> Result<Option<u64>, DurableError> {
        Ok(None)
    }

    /// Keeps task `row` (docs/CONTRACT.md section 18), replacing the row of the same ID, synced before it returns
    /// (a task is in the store before the answer that names it). Rows whose
    /// [`TaskRow::expires_ms`] has passed may be removed meanwhile.
    fn put_task(&self, row: &TaskRow) -> Result<(), DurableError>;

    /// Every task the store holds whose [`TaskRow::expires_ms`] is not before `now_ms`; the
    /// expired ones are removed.
    fn load_tasks(&self, now_ms: u64) -> Result<Vec<TaskRow>, DurableError>;
}

/// What [`Durable::acquire`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquired {
    /// This process held the lease already (or no other process can).
    AlreadyHeld,
    /// The lease was free or its holder is gone, and this process holds it now: what this
    /// process loaded of the session may be older than the store.
    Taken,
}

/// One change to one session, as [`Durable::commit`] receives it.
#[derive(Clone, Copy, Debug)]
pub enum Change<'a> {
    /// A binary was opened in the session, and `binary` describes what is open now; `bytes`
    /// are its file's content when the store keeps binaries.
    Open {
        /// Whether it replaced an open binary: then the records and revisions the session held
        /// are gone.
        replaces: bool,
        /// The opened binary.
        binary: &'a StoredBinary,
        /// The file's bytes, when [`Durable::keeps_binaries`].
        bytes: Option<&'a [u8]>,
    },
    /// The current provider and document changed.
    Current {
        /// The provider that is current now.
        provider: &'a str,
        /// The document that is current now.
        document: &'a str,
    },
    /// An Evidence record was appended.
    Record(&'a Arc<EvidenceRecord>),
    /// A revision of a residual unknown was added or changed (refined, resolved).
    Unknown(&'a Unknown),
    /// An annotation revision was added (revisions are never changed).
    Annotation(&'a Annotation),
    /// The session ended (close_binary): forget it.
    Close,
}

/// What is kept of a session's open binary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredBinary {
    /// The label (the path as the caller gave it).
    pub label: String,
    /// Where the file was found (the real path of the opened descriptor), if it was a file.
    pub path: Option<PathBuf>,
    /// The SHA-256 of the file's bytes, as 64 lowercase hexadecimal digits, if it was a file.
    pub sha256: Option<String>,
    /// The file's size in bytes.
    pub size: u64,
    /// The declared provider identities; the first served the file.
    pub providers: Vec<String>,
    /// The current provider.
    pub current_provider: String,
    /// The current document.
    pub current_document: Option<String>,
}

/// One session as the store holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredSession {
    /// Its handle.
    pub handle: String,
    /// Its open binary, if one is open.
    pub binary: Option<StoredBinary>,
    /// When it was created, in seconds since the Unix epoch.
    pub created: u64,
    /// When a change was last committed to it, in seconds since the Unix epoch.
    pub used: u64,
    /// Its Evidence records, oldest first.
    pub records: Vec<Arc<EvidenceRecord>>,
    /// Every revision of its residual unknowns, oldest first.
    pub unknowns: Vec<Unknown>,
    /// Every annotation revision, oldest first.
    pub annotations: Vec<Annotation>,
}

/// Everything [`Durable::load`] reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// The sessions, by handle.
    pub sessions: Vec<StoredSession>,
    /// One past the highest Evidence number ever committed.
    pub next_evidence: u64,
    /// One past the highest unknown number ever committed.
    pub next_unknown: u64,
    /// One past the highest annotation number ever committed.
    pub next_annotation: u64,
}

/// Why the store failed. Each message names the store and the cause; a failed commit changed
/// nothing, in the store or in memory.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DurableError {
    /// The store's folder cannot be made.
    #[error("cannot create the folder of the store {}: {source}", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The file cannot be opened or created (a read-only folder or disk, no permission).
    #[error(
        "cannot open the store {}: {source}; check that its folder is writable, or name \
         another file with --store (or --store memory)",
        path.display()
    )]
    Unopenable {
        /// The file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The file exists but is not a store: not a SQLite file, or one of another application.
    #[error(
        "{} is not a rea store ({reason}); name another file with --store, or move this one away",
        path.display()
    )]
    NotAStore {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        reason: &'static str,
    },
    /// The file is a store whose pages are damaged or missing (a truncated or corrupted file).
    #[error(
        "the store {} is damaged ({detail}); nothing was changed in it: restore it from a \
         backup, or name another file with --store",
        path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What was found.
        detail: String,
    },
    /// The store was written by a newer rea.
    #[error(
        "the store {} has schema version {found}, newer than version {supported}, the newest \
         this rea reads; use a newer rea, or name another file with --store",
        path.display()
    )]
    Newer {
        /// The file.
        path: PathBuf,
        /// Its schema version.
        found: i64,
        /// [`SCHEMA_VERSION`].
        supported: i64,
    },
    /// The store reached `--max-store-mib`, or the disk is full.
    #[error(
        "the store {} is full ({cause}): it reached --max-store-mib ({limit_mib} MiB) or its \
         disk is full; nothing of this call was kept: close binary sessions (close_binary) to \
         free space, or raise --max-store-mib",
        path.display()
    )]
    Full {
        /// The file.
        path: PathBuf,
        /// `--max-store-mib`.
        limit_mib: u64,
        /// SQLite's error.
        cause: rusqlite::Error,
    },
    /// Any other failure of SQLite while reading or writing.
    #[error("the store {} failed while {action}: {source}", path.display())]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// What it was doing.
        action: &'static str,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// Another live process serves the session on this store (see [`lease`]).
    #[error(
        "the binary session {handle} is served by another rea serve on the store {} (pid \
         {pid}); it is served here once that process ends, or open the file in a new session",
        path.display()
    )]
    Held {
        /// The file.
        path: PathBuf,
        /// The session.
        handle: String,
        /// The process holding it.
        pid: u32,
    },
    /// The PostgreSQL database failed, or did not answer within [`CALL_BOUND`].
    #[error("the store {store} failed while {action}: {cause}")]
    Postgres {
        /// `postgres://host:port/database` (never the password).
        store: String,
        /// What it was doing.
        action: &'static str,
        /// The database's or the connection's error.
        cause: String,
    },
    /// The PostgreSQL database has migrations newer than this rea applies.
    #[error(
        "the store {store} has schema version {found}, newer than version {supported}, the \
         newest this rea reads; use a newer rea, or name another database with --store"
    )]
    PostgresNewer {
        /// `postgres://host:port/database`.
        store: String,
        /// Its newest migration.
        found: i64,
        /// [`POSTGRES_SCHEMA_VERSION`].
        supported: i64,
    },
    /// A row of the PostgreSQL database does not decode (see [`rows`]).
    #[error("the store {store} holds a row it cannot read back: {source}")]
    PostgresRow {
        /// `postgres://host:port/database`.
        store: String,
        /// Why the row was refused.
        source: RowError,
    },
    /// Another instance changed the session while this call ran, so this call's change no
    /// longer follows what the store holds; nothing of it was kept.
    #[error(
        "the binary session {handle} was changed through another rea instance on the store \
         {store} while this call ran; nothing of this call was kept: call it again"
    )]
    Stale {
        /// `postgres://host:port/database`.
        store: String,
        /// The session.
        handle: String,
    },
    /// A row read back does not decode (see [`rows`]).
    #[error("the store {} holds a row it cannot read back: {source}", path.display())]
    Row {
        /// The file.
        path: PathBuf,
        /// Why the row was refused.
        source: RowError,
    },
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn unix_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        })
}
