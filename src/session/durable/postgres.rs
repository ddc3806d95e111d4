//! [`PostgresStore`]: the store in a PostgreSQL database that several `rea serve --http`
//! instances share (docs/CONTRACT.md section 16): a team server behind a load
//! balancer.
//!
//! - **Every instance serves every session.** There is no lease that gives a session to one
//!   instance: each commit locks the session's row for its own transaction only, checks that
//!   the records it appends follow the last one the database holds (else
//!   [`DurableError::Stale`]: the session layer reads the session afresh and prepares the
//!   record again), and bumps the session's version. Before a request uses a session an
//!   instance compares that version with the one it last read ([`Durable::changed_since`]:
//!   one indexed read) and reads the session afresh when another instance changed it.
//! - **Numbering from the database.** Evidence numbers come from the sequence
//!   `rea_evidence_numbers`, drawn per record ([`Durable::issue_evidence_number`]), so the IDs
//!   of one session increase along its ledger whichever instance appends; unknown and
//!   annotation numbers come in blocks of 2^24 per instance start from sequences of that
//!   increment, so no two instances issue one ID.
//! - **Binaries content-addressed**: the bytes of each opened binary once, by SHA-256, in
//!   `rea_binaries`, so any instance can open any session's binary again.
//! - **Bounds.** Each call is bounded by [`CALL_BOUND`] (one that moves a binary's bytes,
//!   by a second more per 8 MiB); each connection asks the server for
//!   `statement_timeout` and `lock_timeout` within it and for an
//!   `idle_in_transaction_session_timeout` of [`LEASE_SECONDS`] seconds (and TCP keepalives
//!   from the server after as long idle), so a transaction of an instance that stops
//!   answering (a cut network, a frozen machine) is ended by the server and its row locks
//!   freed within that bound after its last statement. An instance killed outright holds
//!   nothing: the server ends its connections when their sockets close.
//! - **Migrations**: versioned, in `rea_migrations`, applied at start under an advisory lock
//!   (so instances starting at once apply each once); a database whose newest migration is
//!   past [`POSTGRES_SCHEMA_VERSION`] is refused.
//!
//! The client is `tokio-postgres` with a `deadpool-postgres` pool, driven by a runtime of the
//! store's own: [`Durable`] is synchronous and is called from the blocking tool pool and from
//! request handlers alike, so each call is sent to that runtime and waited for on a channel
//! (never a `block_on` in a caller's runtime).

use std::collections::HashMap;
use std::future::Future;
use std::str::FromStr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::config::Host;
use tokio_postgres::{IsolationLevel, NoTls};

use super::rows::{self, RecordRow, RowError, TaskRow};
use super::{Change, Durable, DurableError, Snapshot, StoredBinary, StoredSession, unix_now};

/// The newest migration this rea applies and reads; a database with a newer one is refused.
pub const POSTGRES_SCHEMA_VERSION: i64 = 2;

/// The bound of one store call (a commit, a read), in seconds: past it the call fails with an
/// error naming the store, whatever the database or the network does.
pub const CALL_BOUND: Duration = Duration::from_secs(10);

/// Seconds after which the database ends a transaction an instance left open and stopped
/// driving (`idle_in_transaction_session_timeout`): the longest a session stays locked by an
/// instance that died mid-commit without its socket closing.
pub const LEASE_SECONDS: u64 = 10;

/// The slowest transfer of a binary's bytes a call allows for, beyond [`CALL_BOUND`].
const BYTES_PER_SECOND: usize = 8 << 20;

/// How long a new connection may take.
const CONNECT_BOUND: Duration = Duration::from_secs(5);

/// Connections each instance keeps.
const POOL_SIZE: usize = 8;

/// Times a commit is tried again when the database ends its connection under it.
const RECONNECTS: usize = 1;

/// The migrations, in order: version `n` is `MIGRATIONS[n - 1]`.
const MIGRATIONS: &[&str] = &[
    "
CREATE TABLE rea_sessions (
    handle TEXT PRIMARY KEY,
    created BIGINT NOT NULL,
    used BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 1,
    binary_row TEXT,
    sha256 TEXT,
    current_provider TEXT,
    current_document TEXT
);
CREATE INDEX rea_sessions_by_sha256 ON rea_sessions (sha256);
CREATE TABLE rea_binaries (sha256 TEXT PRIMARY KEY, bytes BYTEA NOT NULL);
CREATE TABLE rea_evidence (
    id TEXT COLLATE \"C\" PRIMARY KEY,
    handle TEXT NOT NULL,
    sequence BIGINT NOT NULL,
    operation TEXT NOT NULL,
    arguments TEXT NOT NULL,
    result TEXT NOT NULL,
    provider TEXT,
    document TEXT,
    UNIQUE (handle, sequence)
);
CREATE TABLE rea_unknowns (
    id TEXT COLLATE \"C\" PRIMARY KEY, handle TEXT NOT NULL, revision TEXT NOT NULL
);
CREATE INDEX rea_unknowns_by_session ON rea_unknowns (handle);
CREATE TABLE rea_annotations (
    id TEXT COLLATE \"C\" PRIMARY KEY, handle TEXT NOT NULL, revision TEXT NOT NULL
);
CREATE INDEX rea_annotations_by_session ON rea_annotations (handle);
CREATE SEQUENCE rea_evidence_numbers START 1;
CREATE SEQUENCE rea_unknown_blocks START 1 INCREMENT 16777216;
CREATE SEQUENCE rea_annotation_blocks START 1 INCREMENT 16777216;
",
    "
CREATE TABLE rea_tasks (
    id TEXT COLLATE \"C\" PRIMARY KEY,
    pid BIGINT NOT NULL,
    start BIGINT NOT NULL,
    expires BIGINT NOT NULL,
    task TEXT NOT NULL
);
",
];

/// The tables holding a session's rows, the session's own row last.
const SESSION_TABLES: [&str; 4] = [
    "rea_evidence",
    "rea_unknowns",
    "rea_annotations",
    "rea_sessions",
];

/// The advisory lock migrations run under (`REA1` in ASCII).
const MIGRATION_LOCK: i64 = 0x5245_4131;

/// How a [`PostgresStore`] is set up.
#[derive(Clone, Copy, Debug)]
pub struct PostgresOptions {
    /// Whether the bytes of opened binaries are kept (`--store-binaries`).
    pub keep_binaries: bool,
    /// Days a session no call changed is kept (`--session-retention-days`), swept at start.
    pub retention_days: Option<u64>,
}

/// The store in a PostgreSQL database several instances share (see the
/// [module documentation](self)).
pub struct PostgresStore {
    /// `postgres://host:port/database`, never the password.
    name: String,
    options: PostgresOptions,
    /// The store's own runtime (see the module documentation); `None` only while dropping.
    runtime: Option<tokio::runtime::Runtime>,
    pool: Pool,
    /// The version of each session this instance last read or wrote.
    seen: Mutex<HashMap<String, i64>>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Drop for PostgresStore {
    fn drop(&mut self) {
        // Dropped from a runtime's thread as well as outside one: never wait here.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// What a failed database call says, for [`DurableError::Postgres`].
#[derive(Debug)]
enum Failure {
    /// The database or the connection failed.
    Database(tokio_postgres::Error),
    /// The pool could not give a connection (the database is down or unreachable).
    Pool(String),
    /// A row read back does not decode.
    Row(RowError),
    /// Another instance appended to the session first.
    Stale,
    /// The database is of a newer schema.
    Newer(i64),
}

impl From<tokio_postgres::Error> for Failure {
    fn from(error: tokio_postgres::Error) -> Failure {
        Failure::Database(error)
    }
}

impl From<deadpool_postgres::PoolError> for Failure {
    fn from(error: deadpool_postgres::PoolError) -> Failure {
        let text = match &error {
            deadpool_postgres::PoolError::Backend(error) => cause(error),
            other => other.to_string(),
        };
        Failure::Pool(text)
    }
}

impl From<RowError> for Failure {
    fn from(error: RowError) -> Failure {
        Failure::Row(error)
    }
}

/// The database's own message of `error` (tokio-postgres shows only `db error` otherwise),
/// with the cause of a connection failure.
fn cause(error: &tokio_postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        return format!("{}: {} ({})", db.severity(), db.message(), db.code().code());
    }
    match std::error::Error::source(error) {
        Some(source) => format!("{error}: {source}"),
        None => error.to_string(),
    }
}

/// Whether `failure` is a connection the database closed (it restarted): worth one more try
/// on a fresh connection, since nothing of the transaction was committed.
fn reconnectable(failure: &Failure) -> bool {
    matches!(failure, Failure::Database(error) if error.is_closed())
}

/// `postgres://host:port/database` of `config`, never its password.
fn describe(config: &tokio_postgres::Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .zip(config.get_ports().iter().chain(std::iter::repeat(&5432u16)))
        .map(|(host, port)| match host {
            Host::Tcp(name) => format!("{name}:{port}"),
            #[cfg(unix)]
            Host::Unix(path) => format!("{}:{port}", path.display()),
        })
        .collect();
    let hosts = if hosts.is_empty() {
        "localhost:5432".to_owned()
    } else {
        hosts.join(",")
    };
    format!(
        "postgres://{hosts}/{}",
        config
            .get_dbname()
            .or(config.get_user())
            .unwrap_or("postgres")
    )
}

/// One change, owned, for the store's runtime.
#[derive(Debug)]
enum Owned {
    Open {
        replaces: bool,
        row: String,
        sha256: Option<String>,
        provider: String,
        document: Option<String>,
        bytes: Option<Vec<u8>>,
    },
    Current {
        provider: String,
        document: String,
    },
    Record {
        id: String,
        sequence: i64,
        operation: String,
        arguments: String,
        result: String,
        provider: Option<String>,
        document: Option<String>,
    },
    Unknown {
        id: String,
        revision: String,
    },
    Annotation {
        id: String,
        revision: String,
    },
    Close,
}

fn own(change: &Change<'_>, keep_binaries: bool) -> Owned {
    match *change {
        Change::Open {
            replaces,
            binary,
            bytes,
        } => Owned::Open {
            replaces,
            row: rows::encode_binary(binary),
            sha256: binary.sha256.clone(),
            provider: binary.current_provider.clone(),
            document: binary.current_document.clone(),
            bytes: bytes.filter(|_| keep_binaries).map(<[u8]>::to_vec),
        },
        Change::Current { provider, document } => Owned::Current {
            provider: provider.to_owned(),
            document: document.to_owned(),
        },
        Change::Record(record) => Owned::Record {
            id: record.id.as_str().to_owned(),
            sequence: i64::try_from(record.sequence).unwrap_or(i64::MAX),
            operation: record.operation.clone(),
            arguments: serde_json::to_string(&record.arguments).unwrap_or_default(),
            result: serde_json::to_string(&record.result).unwrap_or_default(),
            provider: record.provider.clone(),
            document: record.document.clone(),
        },
        Change::Unknown(revision) => Owned::Unknown {
            id: revision.id.as_str().to_owned(),
            revision: rows::encode_unknown(revision),
        },
        Change::Annotation(revision) => Owned::Annotation {
            id: revision.id.as_str().to_owned(),
            revision: rows::encode_annotation(revision),
        },
        Change::Close => Owned::Close,
    }
}

/// Sessions read back, with the version of each.
type Read = Vec<(StoredSession, i64)>;

impl PostgresStore {
    /// Connects to the database `url` names (`postgres://user@host:port/database`, or with
    /// `?host=/socket/folder`), applies the migrations it lacks, and refuses a database whose
    /// schema is newer than this rea's. Fails with an error naming the store (never its
    /// password) when the database cannot be reached within the connect bound.
    pub fn open(url: &str, options: PostgresOptions) -> Result<PostgresStore, DurableError> {
        let mut config =
            tokio_postgres::Config::from_str(url).map_err(|error| DurableError::Postgres {
                store: redacted(url),
                action: "reading its address",
                cause: error.to_string(),
            })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_BOUND);
        }
        config.keepalives_idle(Duration::from_secs(LEASE_SECONDS));
        if config.get_application_name().is_none() {
            config.application_name("rea");
        }
        let bound_ms = CALL_BOUND.as_millis().saturating_sub(1000);
        let mut server_options = config.get_options().unwrap_or_default().to_owned();
        server_options.push_str(&format!(
            " -c statement_timeout={bound_ms} -c lock_timeout={bound_ms} \
             -c idle_in_transaction_session_timeout={} -c tcp_keepalives_idle={LEASE_SECONDS} \
             -c tcp_keepalives_interval=2 -c tcp_keepalives_count=3",
            LEASE_SECONDS * 1000
        ));
        config.options(server_options.trim());
        let name = describe(&config);
        let fail = |action, cause: String| DurableError::Postgres {
            store: name.clone(),
            action,
            cause,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("rea-postgres")
            .enable_all()
            .build()
            .map_err(|error| fail("starting its client", error.to_string()))?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(CALL_BOUND))
            .create_timeout(Some(CONNECT_BOUND))
            .recycle_timeout(Some(CONNECT_BOUND))
            .build()
            .map_err(|error| fail("starting its connection pool", error.to_string()))?;
        let store = PostgresStore {
            name,
            options,
            runtime: Some(runtime),
            pool,
            seen: Mutex::new(HashMap::new()),
        };
        store.call("applying its migrations", migrate)?;
        Ok(store)
    }

    fn seen(&self) -> MutexGuard<'_, HashMap<String, i64>> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The error for `failure` met while doing `action`.
    fn error(&self, action: &'static str, failure: Failure) -> DurableError {
        let store = self.name.clone();
        match failure {
            Failure::Database(error) => DurableError::Postgres {
                store,
                action,
                cause: cause(&error),
            },
            Failure::Pool(cause) => DurableError::Postgres {
                store,
                action,
                cause: format!("no connection to the database: {cause}"),
            },
            Failure::Row(source) => DurableError::PostgresRow { store, source },
            Failure::Stale => DurableError::Stale {
                store,
                handle: String::new(),
            },
            Failure::Newer(found) => DurableError::PostgresNewer {
                store,
                found,
                supported: POSTGRES_SCHEMA_VERSION,
            },
        }
    }

    /// Runs `work` on the store's runtime with a connection pool, within [`CALL_BOUND`].
    fn call<T, F, Fut>(&self, action: &'static str, work: F) -> Result<T, DurableError>
    where
        T: Send + 'static,
        F: FnOnce(Pool) -> Fut,
        Fut: Future<Output = Result<T, Failure>> + Send + 'static,
    {
        self.call_within(action, CALL_BOUND, work)
    }

    /// [`PostgresStore::call`] within `bound` (a call that moves a binary's bytes).
    fn call_within<T, F, Fut>(
        &self,
        action: &'static str,
        bound: Duration,
        work: F,
    ) -> Result<T, DurableError>
    where
        T: Send + 'static,
        F: FnOnce(Pool) -> Fut,
        Fut: Future<Output = Result<T, Failure>> + Send + 'static,
    {
        let Some(runtime) = &self.runtime else {
            return Err(self.error(action, Failure::Pool("the store is closing".to_owned())));
        };
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        let future = work(self.pool.clone());
        runtime.spawn(async move {
            let outcome = tokio::time::timeout(bound, future).await;
            let _ = sender.send(outcome);
        });
        let timed_out = || {
            self.error(
                action,
                Failure::Pool(format!(
                    "no answer within {} seconds (is the database up and reachable?)",
                    bound.as_secs()
                )),
            )
        };
        match receiver.recv_timeout(bound + Duration::from_secs(1)) {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(failure))) => Err(self.error(action, failure)),
            Ok(Err(_)) | Err(_) => Err(timed_out()),
        }
    }

    /// Reads the sessions (only `only`, when given) and remembers their versions.
    fn read(&self, only: Option<&str>) -> Result<Vec<StoredSession>, DurableError> {
        let only = only.map(str::to_owned);
        let read = self.call("reading it", move |pool| read_sessions(pool, only))?;
        let mut seen = self.seen();
        Ok(read
            .into_iter()
            .map(|(session, version)| {
                seen.insert(session.handle.clone(), version);
                session
            })
            .collect())
    }
}

/// `url` without its password, for an error met before it was parsed.
fn redacted(url: &str) -> String {
    match url.split_once('@') {
        Some((credentials, rest)) => match credentials.rsplit_once(':') {
            Some((user, _)) if user.contains("//") => format!("{user}@{rest}"),
            _ => format!("{credentials}@{rest}"),
        },
        None => url.to_owned(),
    }
    .split('?')
    .next()
    .unwrap_or_default()
    .to_owned()
}

/// Applies the migrations the database lacks, one instance at a time.
async fn migrate(pool: Pool) -> Result<(), Failure> {
    let mut client = pool.get().await?;
    let transaction = client.transaction().await?;
    transaction
        .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    // Created only when missing: a role without CREATE may run a migrated database.
    let exists: bool = transaction
        .query_one("SELECT to_regclass('rea_migrations') IS NOT NULL", &[])
        .await?
        .get(0);
    if !exists {
        transaction
            .batch_execute(
                "CREATE TABLE rea_migrations (version BIGINT PRIMARY KEY, applied BIGINT NOT NULL)",
            )
            .await?;
    }
    let row = transaction
        .query_one("SELECT coalesce(max(version), 0) FROM rea_migrations", &[])
        .await?;
    let found: i64 = row.get(0);
    if found > POSTGRES_SCHEMA_VERSION {
        return Err(Failure::Newer(found));
    }
    let now = i64::try_from(unix_now()).unwrap_or(i64::MAX);
    for (at, migration) in MIGRATIONS.iter().enumerate() {
        let version = i64::try_from(at).unwrap_or(i64::MAX) + 1;
        if version <= found {
            continue;
        }
        transaction.batch_execute(migration).await?;
        transaction
            .execute(
                "INSERT INTO rea_migrations (version, applied) VALUES ($1, $2)",
                &[&version, &now],
            )
            .await?;
    }
    transaction.commit().await?;
    Ok(())
}

/// The sessions (only `only`, when given) with their records, revisions and versions, read in
/// one consistent snapshot.
async fn read_sessions(pool: Pool, only: Option<String>) -> Result<Read, Failure> {
    let mut client = pool.get().await?;
    let transaction = client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await?;
    let mut sessions: Read = Vec::new();
    let mut by_handle: HashMap<String, usize> = HashMap::new();
    for row in transaction
        .query(
            &transaction
                .prepare_cached(
                    "SELECT handle, created, used, version, binary_row, current_provider,
                            current_document
                     FROM rea_sessions WHERE $1::TEXT IS NULL OR handle = $1
                     ORDER BY created, handle",
                )
                .await?,
            &[&only],
        )
        .await?
    {
        let handle: String = row.get(0);
        let binary = match row.get::<_, Option<String>>(4) {
            Some(text) => {
                let mut binary: StoredBinary = rows::decode_binary(&handle, &text)?;
                if let Some(provider) = row.get::<_, Option<String>>(5) {
                    binary.current_provider = provider;
                }
                binary.current_document = row.get(6);
                Some(binary)
            }
            None => None,
        };
        let seconds = |at: usize| u64::try_from(row.get::<_, i64>(at)).unwrap_or(0);
        by_handle.insert(handle.clone(), sessions.len());
        sessions.push((
            StoredSession {
                handle,
                binary,
                created: seconds(1),
                used: seconds(2),
                records: Vec::new(),
                unknowns: Vec::new(),
                annotations: Vec::new(),
            },
            row.get(3),
        ));
    }
    for row in transaction
        .query(
            &transaction
                .prepare_cached(
                    "SELECT id, handle, sequence, operation, arguments, result, provider,
                            document
                     FROM rea_evidence WHERE $1::TEXT IS NULL OR handle = $1
                     ORDER BY handle, sequence",
                )
                .await?,
            &[&only],
        )
        .await?
    {
        let handle: String = row.get(1);
        let Some(&at) = by_handle.get(&handle) else {
            continue;
        };
        let id: String = row.get(0);
        let operation: String = row.get(3);
        let arguments: String = row.get(4);
        let result: String = row.get(5);
        let provider: Option<String> = row.get(6);
        let document: Option<String> = row.get(7);
        let record = rows::decode_record(RecordRow {
            id: &id,
            sequence: row.get(2),
            operation: &operation,
            arguments: &arguments,
            result: &result,
            provider: provider.as_deref(),
            document: document.as_deref(),
        })?;
        sessions[at].0.records.push(record);
    }
    for table in ["rea_unknowns", "rea_annotations"] {
        for row in transaction
            .query(
                &transaction
                    .prepare_cached(&format!(
                        "SELECT id, handle, revision FROM {table}
                         WHERE $1::TEXT IS NULL OR handle = $1 ORDER BY id"
                    ))
                    .await?,
                &[&only],
            )
            .await?
        {
            let handle: String = row.get(1);
            let Some(&at) = by_handle.get(&handle) else {
                continue;
            };
            let id: String = row.get(0);
            let text: String = row.get(2);
            let session = &mut sessions[at].0;
            if table == "rea_unknowns" {
                session.unknowns.push(rows::decode_unknown(&id, &text)?);
            } else {
                session
                    .annotations
                    .push(rows::decode_annotation(&id, &text)?);
            }
        }
    }
    transaction.commit().await?;
    Ok(sessions)
}

/// Writes `changes` of session `handle` in one transaction; returns the session's version
/// after it and before it (`None` when the session was closed or is new).
async fn write(
    pool: Pool,
    handle: String,
    changes: Arc<Vec<Owned>>,
    bound: Duration,
) -> Result<Option<(i64, Option<i64>)>, Failure> {
    let mut client = pool.get().await?;
    let transaction = client.transaction().await?;
    if bound > CALL_BOUND {
        allow(&transaction, bound).await?;
    }
    let now = i64::try_from(unix_now()).unwrap_or(i64::MAX);
    let closes = changes.iter().any(|change| matches!(change, Owned::Close));
    let mut versions = None;
    if !closes {
        // Takes the session's row lock: commits to one session run one after the other.
        let row = transaction
            .query_one(
                &transaction
                    .prepare_cached(
                        "INSERT INTO rea_sessions (handle, created, used) VALUES ($1, $2, $2)
                         ON CONFLICT (handle) DO UPDATE
                         SET used = $2, version = rea_sessions.version + 1
                         RETURNING version, (xmax <> 0)",
                    )
                    .await?,
                &[&handle, &now],
            )
            .await?;
        let version: i64 = row.get(0);
        let existed: bool = row.get(1);
        versions = Some((version, existed.then(|| version - 1)));
    }
    for change in changes.iter() {
        match change {
            Owned::Open {
                replaces,
                row,
                sha256,
                provider,
                document,
                bytes,
            } => {
                let before: Option<String> = transaction
                    .query_one(
                        "SELECT sha256 FROM rea_sessions WHERE handle = $1",
                        &[&handle],
                    )
                    .await?
                    .get(0);
                if *replaces {
                    for table in ["rea_evidence", "rea_unknowns", "rea_annotations"] {
                        transaction
                            .execute(
                                &format!("DELETE FROM {table} WHERE handle = $1"),
                                &[&handle],
                            )
                            .await?;
                    }
                }
                transaction
                    .execute(
                        "UPDATE rea_sessions SET binary_row = $2, sha256 = $3,
                         current_provider = $4, current_document = $5 WHERE handle = $1",
                        &[&handle, row, sha256, provider, document],
                    )
                    .await?;
                if let (Some(hash), Some(bytes)) = (sha256, bytes) {
                    transaction
                        .execute(
                            "INSERT INTO rea_binaries (sha256, bytes) VALUES ($1, $2)
                             ON CONFLICT (sha256) DO NOTHING",
                            &[hash, bytes],
                        )
                        .await?;
                }
                if before != *sha256 {
                    forget_unused_binary(&transaction, before).await?;
                }
            }
            Owned::Current { provider, document } => {
                transaction
                    .execute(
                        "UPDATE rea_sessions SET current_provider = $2, current_document = $3
                         WHERE handle = $1",
                        &[&handle, provider, document],
                    )
                    .await?;
            }
            Owned::Record {
                id,
                sequence,
                operation,
                arguments,
                result,
                provider,
                document,
            } => {
                // The record must follow the last one the database holds of this session.
                let last = transaction
                    .query_one(
                        &transaction
                            .prepare_cached(
                                "SELECT coalesce(max(sequence), 0), max(id) FROM rea_evidence
                                 WHERE handle = $1",
                            )
                            .await?,
                        &[&handle],
                    )
                    .await?;
                let last_sequence: i64 = last.get(0);
                let last_id: Option<String> = last.get(1);
                if *sequence != last_sequence + 1
                    || last_id.is_some_and(|last| last.as_str() >= id.as_str())
                {
                    return Err(Failure::Stale);
                }
                let statement = transaction
                    .prepare_cached(
                        "INSERT INTO rea_evidence (id, handle, sequence, operation, arguments,
                         result, provider, document) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                    )
                    .await?;
                transaction
                    .execute(
                        &statement,
                        &[
                            id, &handle, sequence, operation, arguments, result, provider, document,
                        ],
                    )
                    .await?;
            }
            Owned::Unknown { id, revision } => {
                transaction
                    .execute(
                        "INSERT INTO rea_unknowns (id, handle, revision) VALUES ($1, $2, $3)
                         ON CONFLICT (id) DO UPDATE SET revision = $3",
                        &[id, &handle, revision],
                    )
                    .await?;
            }
            Owned::Annotation { id, revision } => {
                transaction
                    .execute(
                        "INSERT INTO rea_annotations (id, handle, revision) VALUES ($1, $2, $3)",
                        &[id, &handle, revision],
                    )
                    .await?;
            }
            Owned::Close => {
                let before: Option<String> = transaction
                    .query_opt(
                        "SELECT sha256 FROM rea_sessions WHERE handle = $1",
                        &[&handle],
                    )
                    .await?
                    .and_then(|row| row.get(0));
                for table in SESSION_TABLES {
                    transaction
                        .execute(
                            &format!("DELETE FROM {table} WHERE handle = $1"),
                            &[&handle],
                        )
                        .await?;
                }
                forget_unused_binary(&transaction, before).await?;
            }
        }
    }
    transaction.commit().await?;
    Ok(versions)
}

/// How long a call that moves `bytes` of a binary may take: [`CALL_BOUND`] and a second per
/// [`BYTES_PER_SECOND`].
fn bound_for(bytes: usize) -> Duration {
    CALL_BOUND + Duration::from_secs(u64::try_from(bytes / BYTES_PER_SECOND).unwrap_or(u64::MAX))
}

/// Raises the server's `statement_timeout` for the rest of `transaction` to `bound`.
async fn allow(
    transaction: &deadpool_postgres::Transaction<'_>,
    bound: Duration,
) -> Result<(), Failure> {
    let ms = bound.as_millis().saturating_sub(1000);
    transaction
        .batch_execute(&format!("SET LOCAL statement_timeout = {ms}"))
        .await?;
    Ok(())
}

/// Drops the bytes of binary `sha256` when no session uses it any more.
async fn forget_unused_binary(
    transaction: &deadpool_postgres::Transaction<'_>,
    sha256: Option<String>,
) -> Result<(), Failure> {
    if let Some(hash) = sha256 {
        transaction
            .execute(
                "DELETE FROM rea_binaries WHERE sha256 = $1
                 AND NOT EXISTS (SELECT 1 FROM rea_sessions WHERE sha256 = $1)",
                &[&hash],
            )
            .await?;
    }
    Ok(())
}

/// Removes the sessions no call changed for `days` days, with their rows and the bytes no
/// other session uses.
async fn forget_expired(pool: Pool, days: u64) -> Result<(), Failure> {
    let cutoff = unix_now().saturating_sub(days.saturating_mul(86_400));
    let cutoff = i64::try_from(cutoff).unwrap_or(i64::MAX);
    let mut client = pool.get().await?;
    let transaction = client.transaction().await?;
    // Their rows stay locked until the sweep commits: a commit to one of them waits for it.
    let expired: Vec<String> = transaction
        .query(
            "SELECT handle FROM rea_sessions WHERE used < $1 FOR UPDATE",
            &[&cutoff],
        )
        .await?
        .iter()
        .map(|row| row.get(0))
        .collect();
    if expired.is_empty() {
        return Ok(());
    }
    for table in SESSION_TABLES {
        transaction
            .execute(
                &format!("DELETE FROM {table} WHERE handle = ANY($1)"),
                &[&expired],
            )
            .await?;
    }
    transaction
        .execute(
            "DELETE FROM rea_binaries b WHERE NOT EXISTS
             (SELECT 1 FROM rea_sessions s WHERE s.sha256 = b.sha256)",
            &[],
        )
        .await?;
    transaction.commit().await?;
    Ok(())
}

impl Durable for PostgresStore {
    fn commit(&self, handle: &str, changes: &[Change<'_>]) -> Result<(), DurableError> {
        let owned: Arc<Vec<Owned>> = Arc::new(
            changes
                .iter()
                .map(|change| own(change, self.options.keep_binaries))
                .collect(),
        );
        let bytes: usize = owned
            .iter()
            .map(|change| match change {
                Owned::Open {
                    bytes: Some(bytes), ..
                } => bytes.len(),
                _ => 0,
            })
            .sum();
        let bound = bound_for(bytes);
        let mut tries = 0;
        let versions = loop {
            let (name, batch) = (handle.to_owned(), Arc::clone(&owned));
            let outcome = self.call_within("committing a change", bound, move |pool| async move {
                match write(pool, name, batch, bound).await {
                    Err(failure) if reconnectable(&failure) => Ok(Err(failure)),
                    other => other.map(Ok),
                }
            });
            match outcome {
                Ok(Ok(versions)) => break versions,
                Ok(Err(failure)) if tries < RECONNECTS => {
                    tracing::info!("the store {} closed a connection; trying anew", self.name);
                    let _ = failure;
                    tries += 1;
                }
                Ok(Err(failure)) => return Err(self.error("committing a change", failure)),
                Err(DurableError::Stale { store, .. }) => {
                    return Err(DurableError::Stale {
                        store,
                        handle: handle.to_owned(),
                    });
                }
                Err(error) => return Err(error),
            }
        };
        let mut seen = self.seen();
        match versions {
            None => {
                seen.remove(handle);
            }
            Some((after, before)) => {
                // Another instance's change in between is read at the session's next use.
                if seen.get(handle).copied() == before {
                    seen.insert(handle.to_owned(), after);
                }
            }
        }
        Ok(())
    }

    fn load(&self) -> Result<Snapshot, DurableError> {
        if let Some(days) = self.options.retention_days {
            self.call("removing sessions past their retention", move |pool| {
                forget_expired(pool, days)
            })?;
        }
        let sessions = self.read(None)?;
        let (unknown, annotation) = self.call("reserving its numbering", |pool| async move {
            let client = pool.get().await?;
            // Blocks of 2^24 numbers: the sequences' increment (migration 1).
            let row = client
                .query_one(
                    "SELECT nextval('rea_unknown_blocks'), nextval('rea_annotation_blocks')",
                    &[],
                )
                .await?;
            Ok((row.get::<_, i64>(0), row.get::<_, i64>(1)))
        })?;
        let number = |next: i64| u64::try_from(next).unwrap_or(1).max(1);
        Ok(Snapshot {
            sessions,
            next_evidence: 1,
            next_unknown: number(unknown),
            next_annotation: number(annotation),
        })
    }

    fn binary(&self, sha256: &str) -> Result<Option<Vec<u8>>, DurableError> {
        let hash = sha256.to_owned();
        // Bounded as the largest binary rea opens (1 GiB) would be.
        let bound =
            bound_for(usize::try_from(crate::base::files::MAX_BINARY_BYTES).unwrap_or(usize::MAX));
        self.call_within("reading a binary", bound, move |pool| async move {
            let mut client = pool.get().await?;
            let transaction = client.transaction().await?;
            allow(&transaction, bound).await?;
            let row = transaction
                .query_opt("SELECT bytes FROM rea_binaries WHERE sha256 = $1", &[&hash])
                .await?;
            transaction.commit().await?;
            Ok(row.map(|row| row.get::<_, Vec<u8>>(0)))
        })
    }

    fn keeps_binaries(&self) -> bool {
        self.options.keep_binaries
    }

    fn put_task(&self, row: &TaskRow) -> Result<(), DurableError> {
        let id = row.id.clone();
        let pid = i64::from(row.holder.pid);
        let start = i64::try_from(row.holder.start).unwrap_or(i64::MAX);
        let expires = i64::try_from(row.expires_ms).unwrap_or(i64::MAX);
        let task = rows::encode_task(row);
        let now = i64::try_from(super::unix_now_ms()).unwrap_or(i64::MAX);
        self.call("keeping a task", move |pool| async move {
            let mut client = pool.get().await?;
            let transaction = client.transaction().await?;
            transaction
                .execute("DELETE FROM rea_tasks WHERE expires < $1", &[&now])
                .await?;
            transaction
                .execute(
                    "INSERT INTO rea_tasks (id, pid, start, expires, task) VALUES ($1, $2, $3, $4, $5)
                     ON CONFLICT (id) DO UPDATE SET pid = $2, start = $3, expires = $4, task = $5",
                    &[&id, &pid, &start, &expires, &task],
                )
                .await?;
            transaction.commit().await?;
            Ok(())
        })
    }

    fn load_tasks(&self, now_ms: u64) -> Result<Vec<TaskRow>, DurableError> {
        let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
        self.call("reading its tasks", move |pool| async move {
            let client = pool.get().await?;
            client
                .execute("DELETE FROM rea_tasks WHERE expires < $1", &[&now])
                .await?;
            let found = client
                .query(
                    "SELECT id, pid, start, expires, task FROM rea_tasks ORDER BY id",
                    &[],
                )
                .await?;
            let mut tasks = Vec::with_capacity(found.len());
            for row in found {
                let id: String = row.get(0);
                let holder = super::lease::Holder::from_row(row.get(1), row.get(2));
                let task: String = row.get(4);
                tasks.push(rows::decode_task(&id, holder, row.get(3), &task)?);
            }
            Ok(tasks)
        })
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn load_session(&self, handle: &str) -> Result<Option<StoredSession>, DurableError> {
        Ok(self.read(Some(handle))?.into_iter().next())
    }

    fn serves_any(&self) -> bool {
        true
    }

    fn changed_since(&self, handle: &str) -> Result<bool, DurableError> {
        let name = handle.to_owned();
        let version: Option<i64> =
            self.call("reading a session's version", move |pool| async move {
                let client = pool.get().await?;
                let statement = client
                    .prepare_cached("SELECT version FROM rea_sessions WHERE handle = $1")
                    .await?;
                Ok(client
                    .query_opt(&statement, &[&name])
                    .await?
                    .map(|row| row.get(0)))
            })?;
        let seen = self.seen().get(handle).copied();
        Ok(match (version, seen) {
            // Never committed (a session made for a call that changed nothing durable).
            (None, None) => false,
            (version, seen) => version != seen,
        })
    }

    fn issue_evidence_number(&self) -> Result<Option<u64>, DurableError> {
        let number: i64 = self.call("issuing an Evidence number", |pool| async move {
            let client = pool.get().await?;
            let statement = client
                .prepare_cached("SELECT nextval('rea_evidence_numbers')")
                .await?;
            Ok(client.query_one(&statement, &[]).await?.get(0))
        })?;
        Ok(Some(u64::try_from(number).unwrap_or(0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_of_a_store_never_shows_its_password() {
        let config =
            tokio_postgres::Config::from_str("postgres://rea:secret@db.example:6543/team").unwrap();
        assert_eq!(describe(&config), "postgres://db.example:6543/team");
        let socket = tokio_postgres::Config::from_str(
            "postgres://rea:secret@/team?host=/run/postgresql&port=5433",
        )
        .unwrap();
        assert_eq!(describe(&socket), "postgres:///run/postgresql:5433/team");
        assert_eq!(
            redacted("postgres://rea:secret@db.example/team?sslmode=x"),
            "postgres://rea@db.example/team"
        );
    }
}
