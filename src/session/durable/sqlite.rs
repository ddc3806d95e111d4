//! [`SqliteStore`]: the store as one SQLite file, in WAL mode with `synchronous=FULL`, so a
//! commit is on the disk when [`Durable::commit`] returns and a crash at any instant leaves
//! either the whole transaction or none of it.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OptionalExtension, TransactionBehavior, params};

use super::lease::Holder;
use super::rows::{self, RecordRow, RowError, id_number};
use super::{
    Acquired, Change, Durable, DurableError, Snapshot, StoredBinary, StoredSession, TaskRow,
    unix_now,
};
use crate::unknowns::Unknown;

/// The schema version this rea writes and reads; a store of a newer one is refused.
pub const SCHEMA_VERSION: i64 = 4;

/// The default of `--session-retention-days`.
pub const DEFAULT_RETENTION_DAYS: u64 = 30;

/// The default of `--max-store-mib`.
pub const DEFAULT_MAX_STORE_MIB: u64 = 4096;

/// SQLite's `application_id` of a rea store: `REA1` in ASCII.
const APPLICATION_ID: i64 = 0x5245_4131;

/// The first 16 bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// How long a commit waits for another process's transaction to end.
const BUSY_WAIT: Duration = Duration::from_secs(5);

const SCHEMA: &str = "
CREATE TABLE sessions (
    handle TEXT PRIMARY KEY,
    created INTEGER NOT NULL,
    used INTEGER NOT NULL,
    binary TEXT,
    sha256 TEXT,
    current_provider TEXT,
    current_document TEXT
);
CREATE TABLE binaries (sha256 TEXT PRIMARY KEY, bytes BLOB NOT NULL);
CREATE TABLE evidence (
    id TEXT PRIMARY KEY,
    handle TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    operation TEXT NOT NULL,
    arguments TEXT NOT NULL,
    result TEXT NOT NULL,
    provider TEXT,
    document TEXT
);
CREATE INDEX evidence_by_session ON evidence (handle);
CREATE TABLE unknowns (id TEXT PRIMARY KEY, handle TEXT NOT NULL, revision TEXT NOT NULL);
CREATE INDEX unknowns_by_session ON unknowns (handle);
CREATE TABLE numbering (kind TEXT PRIMARY KEY, next INTEGER NOT NULL);
INSERT INTO numbering (kind, next) VALUES ('evidence', 1), ('unknown', 1);
";

/// What version 2 added to version 1: the process holding each session (see [`lease`]).
const LEASES: &str = "
CREATE TABLE IF NOT EXISTS leases (
    handle TEXT PRIMARY KEY, pid INTEGER NOT NULL, start INTEGER NOT NULL
);
";

/// What version 3 added to version 2: the annotations.
const ANNOTATIONS_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS annotations (id TEXT PRIMARY KEY, handle TEXT NOT NULL, revision TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS annotations_by_session ON annotations (handle);
INSERT OR IGNORE INTO numbering (kind, next) VALUES ('annotation', 1);
";

/// What version 4 added to version 3: the tasks (docs/CONTRACT.md section 18; the row format is
/// [`super::rows::TaskRow`]).
const TASKS_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY, pid INTEGER NOT NULL, start INTEGER NOT NULL,
    expires INTEGER NOT NULL, task TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tasks_by_expiry ON tasks (expires);
";

/// How many Evidence and unknown numbers a process takes from the store's numbering when it
/// loads it: two processes serving one store at once issue IDs from their own blocks, so no
/// ID is issued twice. (A process that issues more than this many goes on past its block; the
/// store's primary keys refuse, as a failed call, an ID another process issued meanwhile.)
const ID_BLOCK: i64 = 1 << 24;

/// Times a group commit's leader lets waiting callers add their changes before it commits.
const MAX_GROUP_WAITS: usize = 64;

/// How a [`SqliteStore`] is bounded and what it keeps.
#[derive(Clone, Copy, Debug)]
pub struct StoreOptions {
    /// Most MiB the file may hold (`--max-store-mib`); a commit past it fails with
    /// [`DurableError::Full`].
    pub max_mib: u64,
    /// Whether the bytes of opened binaries are kept (`--store-binaries`).
    pub keep_binaries: bool,
    /// Days a session no call changed is kept (`--session-retention-days`): at load, an
    /// older one that no live process holds is removed with its records, unknowns and (when
    /// no other session uses them) its binary's bytes. `None`: kept until `close_binary`.
    pub retention_days: Option<u64>,
}

impl Default for StoreOptions {
    fn default() -> StoreOptions {
        StoreOptions {
            max_mib: DEFAULT_MAX_STORE_MIB,
            keep_binaries: true,
            retention_days: Some(DEFAULT_RETENTION_DAYS),
        }
    }
}

/// The store in one SQLite file, in WAL mode with `synchronous=FULL`: a commit is on the disk
/// when [`Durable::commit`] returns, and a crash at any instant leaves the whole transaction
/// or none of it.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    options: StoreOptions,
    link: Mutex<Link>,
    /// Callers waiting for `link` to add their changes (see [`SqliteStore::commit`]).
    queued: AtomicUsize,
    /// The outcomes of group commits, for the callers whose changes they carried.
    outcomes: Mutex<Outcomes>,
    committed: Condvar,
}

/// The connection, and the group commit whose transaction is open on it.
#[derive(Debug)]
struct Link {
    connection: Connection,
    /// The group commit whose transaction is open: callers add their changes to it.
    open: Option<u64>,
    /// The number of the last group commit begun.
    last: u64,
}

/// The group commits callers still wait for, by number.
#[derive(Debug, Default)]
struct Outcomes(BTreeMap<u64, Outcome>);

/// One group commit: how many callers added changes to it and will collect its outcome, and
/// that outcome once it is committed (SQLite's extended code and message of its error).
#[derive(Debug, Default)]
struct Outcome {
    members: usize,
    done: Option<Result<(), (i32, String)>>,
}

/// The connection with no group commit open on it.
struct LinkGuard<'a>(MutexGuard<'a, Link>);

impl std::ops::Deref for LinkGuard<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.0.connection
    }
}

impl std::ops::DerefMut for LinkGuard<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        &mut self.0.connection
    }
}

impl SqliteStore {
    /// Opens the store at `path`, creating it (and its folder) if there is none. A file that is
    /// not a store, a damaged store, one of a newer schema version, or a folder that cannot be
    /// written is refused with an error naming the path and the cause; nothing in the file is
    /// changed then.
    pub fn open(path: &Path, options: StoreOptions) -> Result<SqliteStore, DurableError> {
        let path = absolute(path);
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder).map_err(|source| DurableError::Folder {
                path: folder.to_owned(),
                source,
            })?;
        }
        check_header(&path)?;
        let connection = Connection::open(&path).map_err(|source| DurableError::Unopenable {
            path: path.clone(),
            source,
        })?;
        let store = SqliteStore {
            path,
            options,
            link: Mutex::new(Link {
                connection,
                open: None,
                last: 0,
            }),
            queued: AtomicUsize::new(0),
            outcomes: Mutex::new(Outcomes::default()),
            committed: Condvar::new(),
        };
        store.prepare()?;
        Ok(store)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn link(&self) -> MutexGuard<'_, Link> {
        // A panic under the lock leaves SQLite's own state whole, so a poisoned lock still
        // guards a usable handle.
        self.link.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The connection with no group commit open on it, for work of its own.
    fn lock(&self) -> LinkGuard<'_> {
        loop {
            let link = self.link();
            match link.open {
                None => return LinkGuard(link),
                Some(group) => {
                    drop(link);
                    // The group's leader commits it without waiting for anyone.
                    let _ = self.outcome(group, false);
                }
            }
        }
    }

    /// Records the outcome of group commit `group` and wakes the callers waiting for it.
    fn finish(&self, group: u64, done: Result<(), (i32, String)>) {
        if let Some(outcome) = self.outcomes().0.get_mut(&group) {
            outcome.done = Some(done);
        }
        self.committed.notify_all();
    }

    fn outcomes(&self) -> MutexGuard<'_, Outcomes> {
        self.outcomes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until group commit `group` is committed; with `collect`, as one of the callers
    /// whose changes it carries, returns its outcome.
    fn outcome(&self, group: u64, collect: bool) -> Result<(), rusqlite::Error> {
        let mut outcomes = self.outcomes();
        loop {
            let Some(outcome) = outcomes.0.get_mut(&group) else {
                // Committed, and collected by every caller in it.
                return Ok(());
            };
            if let Some(done) = outcome.done.clone() {
                if collect {
                    outcome.members -= 1;
                    if outcome.members == 0 {
                        outcomes.0.remove(&group);
                    }
                }
                return done.map_err(|(code, message)| {
                    rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), Some(message))
                });
            }
            outcomes = self
                .committed
                .wait(outcomes)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// The error for `source`, met while doing `action`.
    fn error(&self, action: &'static str, source: rusqlite::Error) -> DurableError {
        let path = self.path.clone();
        match source.sqlite_error_code() {
            Some(ErrorCode::NotADatabase) => DurableError::NotAStore {
                path,
                reason: "not a SQLite file",
            },
            Some(ErrorCode::DatabaseCorrupt) => DurableError::Corrupt {
                path,
                detail: source.to_string(),
            },
            Some(ErrorCode::DiskFull) => DurableError::Full {
                path,
                limit_mib: self.options.max_mib,
                cause: source,
            },
            Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly | ErrorCode::PermissionDenied) => {
                DurableError::Unopenable { path, source }
            }
            _ => DurableError::Sqlite {
                path,
                action,
                source,
            },
        }
    }

    /// Sets WAL mode and synced commits, checks what the file is, and makes the schema of a
    /// new store.
    fn prepare(&self) -> Result<(), DurableError> {
        let connection = self.lock();
        let fail = |action| move |source| self.error(action, source);
        connection
            .busy_timeout(BUSY_WAIT)
            .map_err(fail("setting the busy time-out"))?;
        let application: i64 = connection
            .pragma_query_value(None, "application_id", |row| row.get(0))
            .map_err(fail("reading its header"))?;
        let version: i64 = connection
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(fail("reading its header"))?;
        let tables: i64 = connection
            .query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))
            .map_err(fail("reading its tables"))?;
        if application != APPLICATION_ID && (application != 0 || tables != 0) {
            return Err(DurableError::NotAStore {
                path: self.path.clone(),
                reason: "a SQLite database of another application",
            });
        }
        if version > SCHEMA_VERSION {
            return Err(DurableError::Newer {
                path: self.path.clone(),
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        let mode: String = connection
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(fail("switching to WAL mode"))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(DurableError::Sqlite {
                path: self.path.clone(),
                action: "switching to WAL mode",
                source: rusqlite::Error::InvalidQuery,
            });
        }
        connection
            .pragma_update(None, "synchronous", "FULL")
            .map_err(fail("setting synced commits"))?;
        if application == 0 {
            connection
                .execute_batch(&format!(
                    "BEGIN IMMEDIATE; {SCHEMA} {LEASES} {ANNOTATIONS_SCHEMA} {TASKS_SCHEMA} \
                     PRAGMA application_id = {APPLICATION_ID}; \
                     PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
                ))
                .map_err(fail("creating its tables"))?;
        } else if version < SCHEMA_VERSION {
            // Each step creates only what is missing, so any older version takes them all.
            connection
                .execute_batch(&format!(
                    "BEGIN IMMEDIATE; {LEASES} {ANNOTATIONS_SCHEMA} {TASKS_SCHEMA} \
                     PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
                ))
                .map_err(fail("upgrading its tables"))?;
        }
        let check: String = connection
            .query_row("PRAGMA quick_check(1)", [], |row| row.get(0))
            .map_err(fail("checking it"))?;
        if check != "ok" {
            return Err(DurableError::Corrupt {
                path: self.path.clone(),
                detail: check,
            });
        }
        let page: i64 = connection
            .pragma_query_value(None, "page_size", |row| row.get(0))
            .map_err(fail("reading its page size"))?;
        let pages = self
            .options
            .max_mib
            .saturating_mul(1 << 20)
            .checked_div(u64::try_from(page).unwrap_or(4096).max(1))
            .unwrap_or(u64::MAX);
        let pages = i64::try_from(pages).unwrap_or(i64::MAX);
        connection
            .pragma_update(None, "max_page_count", pages.max(1))
            .map_err(fail("setting its size bound"))?;
        Ok(())
    }

    /// Writes `changes` of session `handle` into the transaction open on `transaction`
    /// (unless another live process holds the session: then nothing, and its holder).
    fn write(
        &self,
        transaction: &Connection,
        handle: &str,
        changes: &[Change<'_>],
    ) -> Result<Option<Holder>, rusqlite::Error> {
        if let Claim::Other(holder) = claim(transaction, handle)? {
            return Ok(Some(holder));
        }
        let now = i64::try_from(unix_now()).unwrap_or(i64::MAX);
        let closes = changes.iter().any(|change| matches!(change, Change::Close));
        if !closes {
            transaction
                .prepare_cached(
                    "INSERT INTO sessions (handle, created, used) VALUES (?1, ?2, ?2)
                     ON CONFLICT (handle) DO UPDATE SET used = ?2",
                )?
                .execute(params![handle, now])?;
        }
        for change in changes {
            match *change {
                Change::Open {
                    replaces,
                    binary,
                    bytes,
                } => {
                    if replaces {
                        transaction.execute("DELETE FROM evidence WHERE handle = ?1", [handle])?;
                        transaction.execute("DELETE FROM unknowns WHERE handle = ?1", [handle])?;
                    }
                    transaction.execute(
                        "UPDATE sessions SET binary = ?2, sha256 = ?3, current_provider = ?4,
                         current_document = ?5 WHERE handle = ?1",
                        params![
                            handle,
                            rows::encode_binary(binary),
                            binary.sha256,
                            binary.current_provider,
                            binary.current_document
                        ],
                    )?;
                    if let (Some(hash), Some(bytes), true) =
                        (&binary.sha256, bytes, self.options.keep_binaries)
                    {
                        transaction.execute(
                            "INSERT OR IGNORE INTO binaries (sha256, bytes) VALUES (?1, ?2)",
                            params![hash, bytes],
                        )?;
                    }
                    forget_unused_binaries(transaction)?;
                }
                Change::Current { provider, document } => {
                    transaction
                        .prepare_cached(
                            "UPDATE sessions SET current_provider = ?2, current_document = ?3
                             WHERE handle = ?1",
                        )?
                        .execute(params![handle, provider, document])?;
                }
                Change::Record(record) => {
                    let arguments = serde_json::to_string(&record.arguments)
                        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
                    let result = serde_json::to_string(&record.result)
                        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
                    transaction
                        .prepare_cached(
                            "INSERT INTO evidence (id, handle, sequence, operation, arguments,
                             result, provider, document) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                        )?
                        .execute(params![
                            record.id.as_str(),
                            handle,
                            i64::try_from(record.sequence).unwrap_or(i64::MAX),
                            record.operation,
                            arguments,
                            result,
                            record.provider,
                            record.document
                        ])?;
                    advance(transaction, "evidence", record.id.as_str())?;
                }
                Change::Unknown(revision) => {
                    transaction
                        .prepare_cached(
                            "INSERT INTO unknowns (id, handle, revision) VALUES (?1, ?2, ?3)
                             ON CONFLICT (id) DO UPDATE SET revision = ?3",
                        )?
                        .execute(params![
                            revision.id.as_str(),
                            handle,
                            rows::encode_unknown(revision)
                        ])?;
                    advance(transaction, "unknown", revision.id.as_str())?;
                }
                Change::Annotation(revision) => {
                    transaction
                        .prepare_cached(
                            "INSERT INTO annotations (id, handle, revision) VALUES (?1, ?2, ?3)",
                        )?
                        .execute(params![
                            revision.id.as_str(),
                            handle,
                            rows::encode_annotation(revision)
                        ])?;
                    advance(transaction, "annotation", revision.id.as_str())?;
                }
                Change::Close => {
                    for table in ["evidence", "unknowns", "annotations", "sessions", "leases"] {
                        transaction
                            .execute(&format!("DELETE FROM {table} WHERE handle = ?1"), [handle])?;
                    }
                    forget_unused_binaries(transaction)?;
                }
            }
        }
        Ok(None)
    }

    /// Adds the changes of one caller to the open group commit, in a savepoint of its own:
    /// changes that fail are rolled back alone, and the others of the group stay.
    fn write_member(
        &self,
        connection: &Connection,
        handle: &str,
        changes: &[Change<'_>],
    ) -> Result<(), WriteFailure> {
        connection.execute_batch("SAVEPOINT member")?;
        let written = self.write(connection, handle, changes);
        // SQLite may have rolled the whole transaction back (a full disk): then there is no
        // savepoint left to roll back to.
        if !matches!(written, Ok(None)) && !connection.is_autocommit() {
            connection.execute_batch("ROLLBACK TO member; RELEASE member")?;
        }
        match written {
            Ok(None) => Ok(connection.execute_batch("RELEASE member")?),
            Ok(Some(holder)) => Err(WriteFailure::Held(holder)),
            Err(source) => Err(WriteFailure::Sqlite(source)),
        }
    }

    /// The sessions the store holds (only `only`, when given), with their records and
    /// revisions.
    fn read_sessions(
        &self,
        connection: &Connection,
        only: Option<&str>,
    ) -> Result<Vec<StoredSession>, DurableError> {
        let fail = |source| self.error("reading it", source);
        let row_error = |source| DurableError::Row {
            path: self.path.clone(),
            source,
        };
        let mut sessions: Vec<StoredSession> = Vec::new();
        let mut by_handle: HashMap<String, usize> = HashMap::new();
        {
            let mut statement = connection
                .prepare(
                    "SELECT handle, created, used, binary, current_provider, current_document
                     FROM sessions WHERE ?1 IS NULL OR handle = ?1 ORDER BY created, handle",
                )
                .map_err(fail)?;
            let mut rows = statement.query([only]).map_err(fail)?;
            while let Some(row) = rows.next().map_err(fail)? {
                let handle: String = row.get(0).map_err(fail)?;
                let binary: Option<String> = row.get(3).map_err(fail)?;
                let binary = match binary {
                    Some(text) => {
                        let mut binary: StoredBinary =
                            rows::decode_binary(&handle, &text).map_err(row_error)?;
                        if let Some(provider) = row.get::<_, Option<String>>(4).map_err(fail)? {
                            binary.current_provider = provider;
                        }
                        binary.current_document = row.get(5).map_err(fail)?;
                        Some(binary)
                    }
                    None => None,
                };
                let seconds = |at| -> Result<u64, DurableError> {
                    Ok(u64::try_from(row.get::<_, i64>(at).map_err(fail)?).unwrap_or(0))
                };
                by_handle.insert(handle.clone(), sessions.len());
                sessions.push(StoredSession {
                    handle,
                    binary,
                    created: seconds(1)?,
                    used: seconds(2)?,
                    records: Vec::new(),
                    unknowns: Vec::new(),
                    annotations: Vec::new(),
                });
            }
        }
        {
            let mut statement = connection
                .prepare(
                    "SELECT id, handle, sequence, operation, arguments, result, provider, document
                     FROM evidence WHERE ?1 IS NULL OR handle = ?1 ORDER BY id",
                )
                .map_err(fail)?;
            let mut rows = statement.query([only]).map_err(fail)?;
            while let Some(row) = rows.next().map_err(fail)? {
                let handle: String = row.get(1).map_err(fail)?;
                let Some(&at) = by_handle.get(&handle) else {
                    continue;
                };
                let id: String = row.get(0).map_err(fail)?;
                let operation: String = row.get(3).map_err(fail)?;
                let arguments: String = row.get(4).map_err(fail)?;
                let result: String = row.get(5).map_err(fail)?;
                let provider: Option<String> = row.get(6).map_err(fail)?;
                let document: Option<String> = row.get(7).map_err(fail)?;
                let record = rows::decode_record(RecordRow {
                    id: &id,
                    sequence: row.get(2).map_err(fail)?,
                    operation: &operation,
                    arguments: &arguments,
                    result: &result,
                    provider: provider.as_deref(),
                    document: document.as_deref(),
                })
                .map_err(row_error)?;
                sessions[at].records.push(record);
            }
        }
        // Revisions of unknowns and annotations: rows of (id, handle, revision JSON).
        let mut revisions =
            |table: &str,
             keep: &mut dyn FnMut(&mut StoredSession, &str, &str) -> Result<(), RowError>|
             -> Result<(), DurableError> {
                let mut statement = connection
                    .prepare(&format!(
                        "SELECT id, handle, revision FROM {table} WHERE ?1 IS NULL OR handle = ?1
                         ORDER BY id"
                    ))
                    .map_err(fail)?;
                let mut rows = statement.query([only]).map_err(fail)?;
                while let Some(row) = rows.next().map_err(fail)? {
                    let handle: String = row.get(1).map_err(fail)?;
                    let Some(&at) = by_handle.get(&handle) else {
                        continue;
                    };
                    let id: String = row.get(0).map_err(fail)?;
                    let text: String = row.get(2).map_err(fail)?;
                    keep(&mut sessions[at], &id, &text).map_err(row_error)?;
                }
                Ok(())
            };
        revisions("unknowns", &mut |session, id, text| {
            let revision: Unknown = rows::decode_unknown(id, text)?;
            session.unknowns.push(revision);
            Ok(())
        })?;
        revisions("annotations", &mut |session, id, text| {
            session.annotations.push(rows::decode_annotation(id, text)?);
            Ok(())
        })?;
        Ok(sessions)
    }

    /// The error for a session `holder` serves.
    fn held(&self, handle: &str, holder: Holder) -> DurableError {
        DurableError::Held {
            path: self.path.clone(),
            handle: handle.to_owned(),
            pid: holder.pid,
        }
    }
}

/// Why one caller's changes were not written.
#[derive(Debug)]
enum WriteFailure {
    /// Another live process holds the session.
    Held(Holder),
    /// SQLite failed.
    Sqlite(rusqlite::Error),
}

impl From<rusqlite::Error> for WriteFailure {
    fn from(error: rusqlite::Error) -> WriteFailure {
        WriteFailure::Sqlite(error)
    }
}

/// SQLite's extended code and the message of `error`, kept for every caller of a group.
fn code_of(error: &rusqlite::Error) -> (i32, String) {
    match error {
        rusqlite::Error::SqliteFailure(failure, message) => (
            failure.extended_code,
            message.clone().unwrap_or_else(|| error.to_string()),
        ),
        other => (1, other.to_string()),
    }
}

/// Who held the lease of a session when this process claimed it.
enum Claim {
    /// This process did.
    Mine,
    /// Another live process does: nothing may be written.
    Other(Holder),
    /// This process does now; `before` held it until then and is gone (`None`: no process
    /// ever wrote the session under a lease).
    Taken { before: Option<Holder> },
}

/// Claims the lease of `handle` for this process inside `transaction`, unless another live
/// process holds it.
fn claim(transaction: &Connection, handle: &str) -> rusqlite::Result<Claim> {
    let me = Holder::me();
    let held: Option<(i64, i64)> = transaction
        .prepare_cached("SELECT pid, start FROM leases WHERE handle = ?1")?
        .query_row([handle], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    let before = held.map(|(pid, start)| Holder::from_row(pid, start));
    match before {
        Some(holder) if holder == me => return Ok(Claim::Mine),
        Some(holder) if holder.alive() => return Ok(Claim::Other(holder)),
        _ => {}
    }
    transaction
        .prepare_cached(
            "INSERT INTO leases (handle, pid, start) VALUES (?1, ?2, ?3)
             ON CONFLICT (handle) DO UPDATE SET pid = ?2, start = ?3",
        )?
        .execute(params![
            handle,
            i64::from(me.pid),
            i64::try_from(me.start).unwrap_or(i64::MAX)
        ])?;
    Ok(Claim::Taken { before })
}

/// Removes the sessions no call changed for `days` days that no live process holds, with
/// their records, unknowns and leases, and the bytes no other session uses.
fn forget_expired(connection: &mut Connection, days: u64) -> rusqlite::Result<()> {
    let cutoff = unix_now().saturating_sub(days.saturating_mul(86_400));
    let cutoff = i64::try_from(cutoff).unwrap_or(i64::MAX);
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let expired: Vec<(String, Option<(i64, i64)>)> = {
        let mut statement = transaction.prepare(
            "SELECT sessions.handle, leases.pid, leases.start FROM sessions
             LEFT JOIN leases ON leases.handle = sessions.handle WHERE sessions.used < ?1",
        )?;
        let rows = statement.query_map([cutoff], |row| {
            let lease = match (row.get::<_, Option<i64>>(1)?, row.get::<_, Option<i64>>(2)?) {
                (Some(pid), Some(start)) => Some((pid, start)),
                _ => None,
            };
            Ok((row.get(0)?, lease))
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for (handle, lease) in expired {
        let held = lease.is_some_and(|(pid, start)| {
            let holder = Holder::from_row(pid, start);
            holder != Holder::me() && holder.alive()
        });
        if held {
            continue;
        }
        for table in ["evidence", "unknowns", "annotations", "sessions", "leases"] {
            transaction.execute(&format!("DELETE FROM {table} WHERE handle = ?1"), [&handle])?;
        }
    }
    forget_unused_binaries(&transaction)?;
    transaction.commit()
}

/// Drops the bytes of binaries no session uses.
fn forget_unused_binaries(transaction: &Connection) -> rusqlite::Result<()> {
    transaction.execute(
        "DELETE FROM binaries WHERE sha256 NOT IN
         (SELECT sha256 FROM sessions WHERE sha256 IS NOT NULL)",
        [],
    )?;
    Ok(())
}

/// Raises the numbering of `kind` past `id`.
fn advance(transaction: &Connection, kind: &str, id: &str) -> rusqlite::Result<()> {
    let next = i64::try_from(id_number(id).saturating_add(1)).unwrap_or(i64::MAX);
    transaction
        .prepare_cached("UPDATE numbering SET next = max(next, ?2) WHERE kind = ?1")?
        .execute(params![kind, next])?;
    Ok(())
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// Refuses a file that is not a SQLite database, or one cut short of what its header says
/// it holds, before SQLite is handed it. A missing or empty file is a new store.
fn check_header(path: &Path) -> Result<(), DurableError> {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Ok(());
    };
    let length = file.metadata().map_or(0, |m| m.len());
    if length == 0 {
        return Ok(());
    }
    let mut header = [0u8; 100];
    let read = file.read(&mut header).unwrap_or(0);
    if read < SQLITE_MAGIC.len() || !header.starts_with(SQLITE_MAGIC) {
        return Err(DurableError::NotAStore {
            path: path.to_owned(),
            reason: "not a SQLite file",
        });
    }
    let corrupt = |detail: String| DurableError::Corrupt {
        path: path.to_owned(),
        detail,
    };
    if read < header.len() {
        return Err(corrupt(format!(
            "{length} bytes, shorter than a SQLite header"
        )));
    }
    // With frames in the write-ahead log the main file may lag behind its header until the
    // log is checkpointed; SQLite's own check below judges that case.
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
        return Ok(());
    }
    let word = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let page = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        size => u64::from(size),
    };
    let pages = u64::from(word(28));
    if word(24) == word(92) && pages > 0 && length < pages.saturating_mul(page) {
        return Err(corrupt(format!(
            "truncated: its header counts {pages} pages of {page} bytes, the file holds {length} bytes"
        )));
    }
    Ok(())
}

impl Durable for SqliteStore {
    /// Group commit: the first caller to find no transaction open begins one (the leader),
    /// callers that come while it is open add their changes to it, each in a savepoint, and
    /// the leader commits them all with one sync, then every caller returns its outcome. A
    /// lone caller commits alone, at once.
    fn commit(&self, handle: &str, changes: &[Change<'_>]) -> Result<(), DurableError> {
        let fail = |source| self.error("committing a change", source);
        self.queued.fetch_add(1, Ordering::SeqCst);
        let mut link = self.link();
        self.queued.fetch_sub(1, Ordering::SeqCst);
        let (group, leader) = match link.open {
            Some(group) => (group, false),
            None => {
                link.connection
                    .execute_batch("BEGIN IMMEDIATE")
                    .map_err(fail)?;
                link.last += 1;
                link.open = Some(link.last);
                (link.last, true)
            }
        };
        self.outcomes().0.entry(group).or_default().members += 1;
        let own = self.write_member(&link.connection, handle, changes);
        if link.connection.is_autocommit() {
            // SQLite rolled the group's transaction back: every caller in it fails alike.
            let cause = match &own {
                Err(WriteFailure::Sqlite(error)) => code_of(error),
                _ => (1, "the transaction was rolled back".to_owned()),
            };
            link.open = None;
            self.finish(group, Err(cause));
        } else if leader {
            // Let the callers already waiting for the connection add their changes.
            for _ in 0..MAX_GROUP_WAITS {
                if self.queued.load(Ordering::SeqCst) == 0 {
                    break;
                }
                drop(link);
                std::thread::yield_now();
                link = self.link();
            }
            if link.open == Some(group) {
                let committed = link.connection.execute_batch("COMMIT");
                if committed.is_err() && !link.connection.is_autocommit() {
                    // A failed COMMIT (a full disk) may leave the transaction open.
                    let _ = link.connection.execute_batch("ROLLBACK");
                }
                link.open = None;
                self.finish(group, committed.map_err(|error| code_of(&error)));
            }
        }
        drop(link);
        let outcome = self.outcome(group, true).map_err(fail);
        match own {
            Ok(()) => outcome,
            Err(WriteFailure::Held(holder)) => Err(self.held(handle, holder)),
            Err(WriteFailure::Sqlite(source)) => Err(fail(source)),
        }
    }

    fn acquire(&self, handle: &str) -> Result<Acquired, DurableError> {
        let mut connection = self.lock();
        let fail = |source| self.error("taking the lease of a session", source);
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        let acquired = match claim(&transaction, handle).map_err(fail)? {
            Claim::Other(holder) => return Err(self.held(handle, holder)),
            Claim::Mine => Acquired::AlreadyHeld,
            Claim::Taken { before: None } => Acquired::AlreadyHeld,
            Claim::Taken { before: Some(_) } => Acquired::Taken,
        };
        transaction.commit().map_err(fail)?;
        Ok(acquired)
    }

    fn load_session(&self, handle: &str) -> Result<Option<StoredSession>, DurableError> {
        let connection = self.lock();
        let sessions = self.read_sessions(&connection, Some(handle))?;
        Ok(sessions.into_iter().next())
    }

    fn load(&self) -> Result<Snapshot, DurableError> {
        let mut connection = self.lock();
        if let Some(days) = self.options.retention_days {
            forget_expired(&mut connection, days)
                .map_err(|source| self.error("removing sessions past their retention", source))?;
        }
        let sessions = self.read_sessions(&connection, None)?;
        let fail = |source| self.error("reserving its numbering", source);
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        let reserve = |kind: &str| -> Result<u64, DurableError> {
            let next: Option<i64> = transaction
                .query_row(
                    "SELECT next FROM numbering WHERE kind = ?1",
                    [kind],
                    |row| row.get(0),
                )
                .optional()
                .map_err(fail)?;
            let next = next.unwrap_or(1).max(1);
            transaction
                .execute(
                    "INSERT INTO numbering (kind, next) VALUES (?1, ?2)
                     ON CONFLICT (kind) DO UPDATE SET next = ?2",
                    params![kind, next.saturating_add(ID_BLOCK)],
                )
                .map_err(fail)?;
            Ok(u64::try_from(next).unwrap_or(1))
        };
        let next_evidence = reserve("evidence")?;
        let next_unknown = reserve("unknown")?;
        let next_annotation = reserve("annotation")?;
        transaction.commit().map_err(fail)?;
        Ok(Snapshot {
            sessions,
            next_evidence,
            next_unknown,
            next_annotation,
        })
    }

    fn binary(&self, sha256: &str) -> Result<Option<Vec<u8>>, DurableError> {
        self.lock()
            .query_row(
                "SELECT bytes FROM binaries WHERE sha256 = ?1",
                [sha256],
                |row| row.get(0),
            )
            .optional()
            .map_err(|source| self.error("reading a binary", source))
    }

    fn keeps_binaries(&self) -> bool {
        self.options.keep_binaries
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }

    /// One transaction (synced: `synchronous=FULL`) that removes expired rows and writes
    /// `row`.
    fn put_task(&self, row: &TaskRow) -> Result<(), DurableError> {
        let mut connection = self.lock();
        let fail = |source| self.error("keeping a task", source);
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        let now = i64::try_from(super::unix_now_ms()).unwrap_or(i64::MAX);
        transaction
            .execute("DELETE FROM tasks WHERE expires < ?1", [now])
            .map_err(fail)?;
        transaction
            .execute(
                "INSERT INTO tasks (id, pid, start, expires, task) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (id) DO UPDATE SET pid = ?2, start = ?3, expires = ?4, task = ?5",
                params![
                    row.id,
                    i64::from(row.holder.pid),
                    i64::try_from(row.holder.start).unwrap_or(i64::MAX),
                    i64::try_from(row.expires_ms).unwrap_or(i64::MAX),
                    super::rows::encode_task(row),
                ],
            )
            .map_err(fail)?;
        transaction.commit().map_err(fail)
    }

    fn load_tasks(&self, now_ms: u64) -> Result<Vec<TaskRow>, DurableError> {
        let connection = self.lock();
        let fail = |source| self.error("reading its tasks", source);
        let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
        connection
            .execute("DELETE FROM tasks WHERE expires < ?1", [now])
            .map_err(fail)?;
        let mut statement = connection
            .prepare("SELECT id, pid, start, expires, task FROM tasks ORDER BY id")
            .map_err(fail)?;
        let rows = statement
            .query_map([], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, i64>(2)?,
                    row.get::<_, i64>(3)?,
                    row.get::<_, String>(4)?,
                ))
            })
            .map_err(fail)?;
        let mut tasks = Vec::new();
        for row in rows {
            let (id, pid, start, expires, text) = row.map_err(fail)?;
            let holder = super::lease::Holder::from_row(pid, start);
            let task = super::rows::decode_task(&id, holder, expires, &text).map_err(|source| {
                DurableError::Row {
                    path: self.path.clone(),
                    source,
                }
            })?;
            tasks.push(task);
        }
        Ok(tasks)
    }
}
