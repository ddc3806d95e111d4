//! [`SqliteStore`]: the store as one SQLite file, in WAL mode with `synchronous=FULL`, so a
//! commit is on the disk when [`Durable::commit`] returns and a crash at any instant leaves
//! either the whole transaction or none of it.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OptionalExtension, TransactionBehavior, params};

use super::rows::{self, RecordRow, RowError, id_number};
use super::{Change, Durable, DurableError, Snapshot, StoredBinary, StoredSession, unix_now};
use crate::unknowns::Unknown;

/// The schema version this rea writes and reads; a store of a newer one is refused.
pub const SCHEMA_VERSION: i64 = 2;

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

/// What version 2 adds to version 1: the annotations (run on a new store after [`SCHEMA`],
/// and on a store of version 1 when it is opened).
const ANNOTATIONS_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS annotations (id TEXT PRIMARY KEY, handle TEXT NOT NULL, revision TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS annotations_by_session ON annotations (handle);
INSERT OR IGNORE INTO numbering (kind, next) VALUES ('annotation', 1);
";

/// How a [`SqliteStore`] is bounded and what it keeps.
#[derive(Clone, Copy, Debug)]
pub struct StoreOptions {
    /// Most MiB the file may hold (`--max-store-mib`); a commit past it fails with
    /// [`DurableError::Full`].
    pub max_mib: u64,
    /// Whether the bytes of opened binaries are kept (`--store-binaries`).
    pub keep_binaries: bool,
}

impl Default for StoreOptions {
    fn default() -> StoreOptions {
        StoreOptions {
            max_mib: DEFAULT_MAX_STORE_MIB,
            keep_binaries: true,
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
    connection: Mutex<Connection>,
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
            connection: Mutex::new(connection),
        };
        store.prepare()?;
        Ok(store)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic under the lock leaves SQLite's own state whole (an open transaction is
        // rolled back when it is dropped), so a poisoned lock still guards a usable handle.
        self.connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
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
                    "BEGIN IMMEDIATE; {SCHEMA} {ANNOTATIONS_SCHEMA} \
                     PRAGMA application_id = {APPLICATION_ID}; \
                     PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
                ))
                .map_err(fail("creating its tables"))?;
        } else if version < SCHEMA_VERSION {
            connection
                .execute_batch(&format!(
                    "BEGIN IMMEDIATE; {ANNOTATIONS_SCHEMA} \
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

    fn write(
        &self,
        connection: &mut Connection,
        handle: &str,
        changes: &[Change<'_>],
    ) -> Result<(), rusqlite::Error> {
        let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
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
                        transaction
                            .execute("DELETE FROM annotations WHERE handle = ?1", [handle])?;
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
                    forget_unused_binaries(&transaction)?;
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
                    advance(&transaction, "evidence", record.id.as_str())?;
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
                    advance(&transaction, "unknown", revision.id.as_str())?;
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
                    advance(&transaction, "annotation", revision.id.as_str())?;
                }
                Change::Close => {
                    for table in ["evidence", "unknowns", "annotations", "sessions"] {
                        transaction
                            .execute(&format!("DELETE FROM {table} WHERE handle = ?1"), [handle])?;
                    }
                    forget_unused_binaries(&transaction)?;
                }
            }
        }
        transaction.commit()
    }
}

/// Drops the bytes of binaries no session uses.
fn forget_unused_binaries(transaction: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute(
        "DELETE FROM binaries WHERE sha256 NOT IN
         (SELECT sha256 FROM sessions WHERE sha256 IS NOT NULL)",
        [],
    )?;
    Ok(())
}

/// Raises the numbering of `kind` past `id`.
fn advance(transaction: &rusqlite::Transaction<'_>, kind: &str, id: &str) -> rusqlite::Result<()> {
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
    fn commit(&self, handle: &str, changes: &[Change<'_>]) -> Result<(), DurableError> {
        let mut connection = self.lock();
        self.write(&mut connection, handle, changes)
            .map_err(|source| self.error("committing a change", source))
    }

    fn load(&self) -> Result<Snapshot, DurableError> {
        let connection = self.lock();
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
                     FROM sessions ORDER BY created, handle",
                )
                .map_err(fail)?;
            let mut rows = statement.query([]).map_err(fail)?;
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
                     FROM evidence ORDER BY id",
                )
                .map_err(fail)?;
            let mut rows = statement.query([]).map_err(fail)?;
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
                        "SELECT id, handle, revision FROM {table} ORDER BY id"
                    ))
                    .map_err(fail)?;
                let mut rows = statement.query([]).map_err(fail)?;
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
        let next = |kind: &str| -> Result<u64, DurableError> {
            let next: Option<i64> = connection
                .query_row(
                    "SELECT next FROM numbering WHERE kind = ?1",
                    [kind],
                    |row| row.get(0),
                )
                .optional()
                .map_err(fail)?;
            Ok(next.and_then(|n| u64::try_from(n).ok()).unwrap_or(1))
        };
        Ok(Snapshot {
            sessions,
            next_evidence: next("evidence")?,
            next_unknown: next("unknown")?,
            next_annotation: next("annotation")?,
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
}
