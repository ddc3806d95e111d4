//! Several binary sessions at once, each named by an opaque handle (docs/CONTRACT.md
//! section 13).
//!
//! - [`SessionHandle`]: 128 bits from the operating system's random source, `bs_` + 22
//!   base64url characters. A handle is a bearer token: whoever holds it can use the session.
//! - [`SessionStore`]: the open sessions of one server, at most [`SessionStore::max_sessions`],
//!   with one Evidence budget ([`LedgerBudget`]) for all their ledgers together and one
//!   [`Confinement`] (the server's roots narrowed by the client's).
//! - [`ClientHandles`]: what one client (a stdio connection, a library caller) knows: the
//!   handles it opened or named, and which one is *its session*, used by requests that name
//!   none.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use std::path::Path;

use super::budget::LedgerBudget;
use super::durable::{Acquired, Durable, MemoryStore, Snapshot, StoredBinary};
use super::error::SessionError;
use super::provider::Companions;
use super::state::{Journal, Reopened, Session, SessionSummary};
use crate::base::files::Confinement;
use crate::capture::CaptureApproval;
use crate::text::Quoted;

/// The default of [`SessionStore::max_sessions`] (`rea serve --max-sessions`).
pub const DEFAULT_MAX_SESSIONS: usize = 8;

/// The prefix of every handle.
const HANDLE_PREFIX: &str = "bs_";

/// Random bytes in a handle: 128 bits.
const HANDLE_BYTES: usize = 16;

/// The name of one binary session: `bs_` and 22 base64url characters encoding 128 random bits
/// from the operating system (never a counter, a path or a time).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionHandle(String);

// The derived order, equality and hash are the text's, so a map keyed by handles may be
// looked up by the text a client sent.
impl std::borrow::Borrow<str> for SessionHandle {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl SessionHandle {
    /// A new handle from the operating system's random source.
    pub fn mint() -> Result<SessionHandle, StoreError> {
        random_token(HANDLE_PREFIX).map(SessionHandle)
    }

    /// The handle as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Handles are bearer tokens: debug output never shows one whole.
impl fmt::Debug for SessionHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: String = self.0.chars().take(HANDLE_PREFIX.len() + 4).collect();
        write!(f, "SessionHandle({shown}…)")
    }
}

impl fmt::Display for SessionHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Unpadded base64url (RFC 4648 section 5).
/// `prefix` and 128 bits from the operating system's random source as 22 base64url
/// characters: an unguessable token (session handles, HTTP session ids).
pub fn random_token(prefix: &str) -> Result<String, StoreError> {
    let mut bytes = [0u8; HANDLE_BYTES];
    getrandom::fill(&mut bytes).map_err(|_| StoreError::NoRandomness)?;
    Ok(format!("{prefix}{}", base64url(&bytes)))
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut text = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let word = chunk
            .iter()
            .enumerate()
            .fold(0u32, |word, (i, &b)| word | u32::from(b) << (16 - 8 * i));
        for sextet in 0..=chunk.len() {
            let index = (word >> (18 - 6 * sextet)) & 0x3f;
            text.push(char::from(ALPHABET[index as usize]));
        }
    }
    text
}

/// Why the store refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// [`SessionStore::max_sessions`] sessions are open already.
    #[error(
        "at most {limit} binary sessions may be open at once and {limit} are; end one with \
         close_binary (passing its session), then open this binary again"
    )]
    TooMany {
        /// The limit.
        limit: usize,
    },
    /// No open session has this handle (it never existed, or it was closed).
    #[error(
        "no binary session {handle:?} is open (it never existed or it was closed); call \
         open_binary and pass the session it returns"
    )]
    Unknown {
        /// The handle as the caller sent it, cut to 64 characters.
        handle: Quoted,
    },
    /// The operating system's random source failed, so no handle could be made.
    #[error("the operating system's random source failed; no session handle could be made")]
    NoRandomness,
    /// The session could not be taken from the durable store (another process serves it, or
    /// the store failed).
    #[error(transparent)]
    Session(#[from] SessionError),
}

/// How a [`SessionStore`] is bounded.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// Most sessions open at once (`--max-sessions`).
    pub max_sessions: usize,
    /// Bytes of Evidence all ledgers together may retain.
    pub ledger_bytes: usize,
    /// Most of [`StoreConfig::ledger_bytes`] one session's ledger may retain (`None`: all of
    /// it). `rea serve --http` gives each a quarter, so one client cannot fill the budget
    /// every other client's observations draw on.
    pub ledger_share_bytes: Option<usize>,
    /// Who approves `run_process_capture` runs (`--approve-captures` makes it the operator).
    pub capture_approval: CaptureApproval,
}

impl Default for StoreConfig {
    fn default() -> StoreConfig {
        StoreConfig {
            max_sessions: DEFAULT_MAX_SESSIONS,
            ledger_bytes: super::evidence::MAX_LEDGER_BYTES,
            ledger_share_bytes: None,
            capture_approval: CaptureApproval::default(),
        }
    }
}

/// The open binary sessions of one server, by handle.
///
/// ```
/// use rea::session::{SessionStore, StoreConfig};
///
/// let store = SessionStore::new(StoreConfig::default());
/// let (handle, session) = store.create().unwrap();
/// assert!(handle.as_str().starts_with("bs_"));
/// assert!(std::sync::Arc::ptr_eq(&store.get(handle.as_str()).unwrap(), &session));
/// store.end(&handle);
/// assert!(store.get(handle.as_str()).is_err());
/// ```
#[derive(Debug)]
pub struct SessionStore {
    sessions: Mutex<BTreeMap<SessionHandle, Entry>>,
    max_sessions: usize,
    budget: Arc<LedgerBudget>,
    confinement: Mutex<Confinement>,
    /// Providers every new session declares beside the one that opens a file.
    companions: Mutex<Option<Arc<dyn Companions>>>,
    /// Where every session's changes are committed before they are applied.
    durable: Arc<dyn Durable>,
    /// How a kept binary is opened again (set by [`SessionStore::resume`]'s caller, the
    /// providers layer), for a session taken over from another process.
    reopen: Mutex<Option<Reopen>>,
    /// Who approves captures, in every session.
    capture_approval: CaptureApproval,
    /// What the tools layer keeps once per store (see [`SessionStore::memo`]).
    memo: Mutex<Option<Memo>>,
}

/// A value the tools layer keeps once per store, opaque to the sessions: the last
/// `compare_procedures` comparison, so that its pages are cut from one computation.
pub type Memo = Arc<dyn std::any::Any + Send + Sync>;

/// Opens a kept binary again: its providers and real path, or `None` when it cannot be.
pub type Reopen = fn(&StoredBinary, &SessionStore) -> Option<Reopened>;

/// An open session and when a request last named or used it (for the idle time-out).
#[derive(Debug)]
struct Entry {
    session: Arc<Session>,
    used: Instant,
    /// Whether it was resumed from the store at start-up (what `open_binary` of its file
    /// resumes).
    resumed: bool,
    /// Whether this process holds the session's lease in the durable store (see
    /// [`SessionStore::hold`]): a session it made is held from the start; a resumed one once
    /// a tool call has taken it.
    held: bool,
}

impl SessionStore {
    /// An empty store bounded by `config`, unconfined, whose sessions are kept in memory
    /// only ([`MemoryStore`]).
    pub fn new(config: StoreConfig) -> SessionStore {
        SessionStore::with_durable(config, Arc::new(MemoryStore::new()))
    }

    /// An empty store bounded by `config`, unconfined, whose sessions commit every change to
    /// `durable` before applying it. [`SessionStore::resume`] loads what `durable` holds.
    pub fn with_durable(config: StoreConfig, durable: Arc<dyn Durable>) -> SessionStore {
        SessionStore {
            sessions: Mutex::new(BTreeMap::new()),
            max_sessions: config.max_sessions.max(1),
            budget: Arc::new(LedgerBudget::shared(
                config.ledger_bytes,
                config.ledger_share_bytes.unwrap_or(config.ledger_bytes),
            )),
            confinement: Mutex::new(Confinement::unrestricted()),
            companions: Mutex::new(None),
            durable,
            reopen: Mutex::new(None),
            capture_approval: config.capture_approval,
            memo: Mutex::new(None),
        }
    }

    /// The one value the tools layer keeps in this store (see [`Memo`]); whoever sets it
    /// replaces what was there.
    pub fn memo(&self) -> std::sync::MutexGuard<'_, Option<Memo>> {
        self.memo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sets how kept binaries are opened again when a session is taken over from another
    /// process (see [`SessionStore::hold`]).
    pub fn set_reopen(&self, reopen: Reopen) {
        *self.reopen.lock().unwrap_or_else(PoisonError::into_inner) = Some(reopen);
    }

    /// The session named `handle`, held by this process, for a tool call that may change it.
    ///
    /// Over a store several processes share (two `rea serve` on one SQLite file), a session is
    /// served by one process at a time: the first call that needs a session this process does
    /// not hold yet takes its lease, and fails naming the other process's pid while that one
    /// runs. A session the store holds but this process has not loaded (another process
    /// opened it, and has ended), or one another process changed since this one loaded it, is
    /// loaded afresh from the store first, so no answered record is missed.
    pub fn hold(&self, handle: &str) -> Result<Arc<Session>, StoreError> {
        let known = self.lock().get_mut(handle).map(|entry| {
            entry.used = Instant::now();
            (Arc::clone(&entry.session), entry.held)
        });
        match known {
            Some((session, true)) => return self.fresh(handle, session),
            Some((session, false)) => {
                if self.durable.acquire(handle).map_err(SessionError::from)?
                    == Acquired::AlreadyHeld
                {
                    self.mark_held(handle);
                    return self.fresh(handle, session);
                }
            }
            None => {
                // Nothing to take before the store is asked whether it holds the session.
                if self
                    .durable
                    .load_session(handle)
                    .map_err(SessionError::from)?
                    .is_none()
                {
                    return Err(StoreError::Unknown {
                        handle: handle.into(),
                    });
                }
                self.durable.acquire(handle).map_err(SessionError::from)?;
            }
        }
        self.reload(handle)
    }

    /// `session` (named `handle`), read afresh first when another process changed it in a
    /// store every process serves every session of (PostgreSQL): the next request sees every
    /// record answered through another instance.
    fn fresh(&self, handle: &str, session: Arc<Session>) -> Result<Arc<Session>, StoreError> {
        if !self.durable.serves_any()
            || !self
                .durable
                .changed_since(handle)
                .map_err(SessionError::from)?
        {
            return Ok(session);
        }
        let stored = self.stored(handle)?;
        let kept = stored.binary.as_ref().map(|binary| binary.sha256.clone());
        let open = session
            .is_open()
            .then(|| session.file_identity().map(|(_, sha256)| sha256));
        if kept == open {
            session.catch_up(stored)?;
            Ok(session)
        } else {
            // Another binary was opened in it: its providers are opened again.
            self.reload(handle)
        }
    }

    /// Makes room for one more session in a store every process serves every session of, by
    /// unloading the one used longest ago (the database keeps it; any request naming it loads
    /// it again). Elsewhere the bound refuses instead.
    fn make_room(&self, sessions: &mut BTreeMap<SessionHandle, Entry>) {
        if !self.durable.serves_any() || sessions.len() < self.max_sessions {
            return;
        }
        if let Some(oldest) = sessions
            .iter()
            .min_by_key(|(_, entry)| entry.used)
            .map(|(handle, _)| handle.clone())
        {
            sessions.remove(&oldest);
        }
    }

    fn mark_held(&self, handle: &str) {
        if let Some(entry) = self.lock().get_mut(handle) {
            entry.held = true;
        }
    }

    /// Session `handle` as the durable store holds it now; when the store no longer has it
    /// (closed through another process), it is no longer open here either.
    fn stored(&self, handle: &str) -> Result<super::durable::StoredSession, StoreError> {
        match self
            .durable
            .load_session(handle)
            .map_err(SessionError::from)?
        {
            Some(stored) => Ok(stored),
            None => {
                self.lock().remove(handle);
                Err(StoreError::Unknown {
                    handle: handle.into(),
                })
            }
        }
    }

    /// Loads session `handle` from the durable store (whose lease this process holds now) in
    /// place of what this process had of it.
    fn reload(&self, handle: &str) -> Result<Arc<Session>, StoreError> {
        let stored = self.stored(handle)?;
        let reopen = *self.reopen.lock().unwrap_or_else(PoisonError::into_inner);
        let providers = match (&stored.binary, reopen) {
            (Some(binary), Some(reopen)) => reopen(binary, self),
            _ => None,
        };
        let journal = Journal {
            handle: handle.to_owned(),
            durable: Arc::clone(&self.durable),
        };
        let session = Arc::new(Session::resumed(
            Arc::clone(&self.budget),
            journal,
            stored,
            providers,
        )?);
        session.set_confinement(self.confinement());
        session.set_companions(self.companions());
        let mut sessions = self.lock();
        if !sessions.contains_key(handle) {
            self.make_room(&mut sessions);
        }
        if !sessions.contains_key(handle) && sessions.len() >= self.max_sessions {
            return Err(StoreError::TooMany {
                limit: self.max_sessions,
            });
        }
        sessions.insert(
            SessionHandle(handle.to_owned()),
            Entry {
                session: Arc::clone(&session),
                used: Instant::now(),
                resumed: true,
                held: true,
            },
        );
        Ok(session)
    }

    /// The store sessions commit to.
    pub fn durable(&self) -> &Arc<dyn Durable> {
        &self.durable
    }

    /// Opens the sessions of `snapshot` (what [`Durable::load`] read), the most recently
    /// used first, at most [`SessionStore::max_sessions`]; `reopen` gives the providers (and
    /// the real path) of a kept binary, or `None` when it cannot be opened again (the session
    /// then resumes with its ledger and unknowns but no binary). Evidence and unknown IDs
    /// issued from now on continue the store's numbering. Returns how many were opened.
    pub fn resume(
        &self,
        snapshot: Snapshot,
        mut reopen: impl FnMut(&StoredBinary) -> Option<Reopened>,
    ) -> Result<usize, SessionError> {
        super::evidence::EvidenceId::continue_at(snapshot.next_evidence);
        crate::unknowns::UnknownId::continue_at(snapshot.next_unknown);
        crate::annotations::AnnotationId::continue_at(snapshot.next_annotation);
        let mut sessions = snapshot.sessions;
        sessions.sort_by(|a, b| b.used.cmp(&a.used).then_with(|| a.handle.cmp(&b.handle)));
        let mut opened = 0;
        for stored in sessions {
            if self.len() >= self.max_sessions {
                break;
            }
            let providers = stored.binary.as_ref().and_then(&mut reopen);
            let handle = SessionHandle(stored.handle.clone());
            let journal = Journal {
                handle: stored.handle.clone(),
                durable: Arc::clone(&self.durable),
            };
            let session = Session::resumed(Arc::clone(&self.budget), journal, stored, providers)?;
            session.set_confinement(self.confinement());
            session.set_companions(self.companions());
            session.set_capture_approval(self.capture_approval);
            self.lock().insert(
                handle,
                Entry {
                    session: Arc::new(session),
                    used: Instant::now(),
                    resumed: true,
                    held: false,
                },
            );
            opened += 1;
        }
        Ok(opened)
    }

    /// The session resumed from the store whose binary is the file found at `path` (its real
    /// path) with SHA-256 `sha256`, if there is one: what `open_binary` and `--open` resume.
    /// Sessions opened by this process are never resumed this way (opening a file twice opens
    /// two sessions, as it always did).
    pub fn find_file(&self, path: &Path, sha256: &str) -> Option<SessionHandle> {
        self.lock()
            .iter()
            .find(|(_, entry)| {
                entry.resumed
                    && entry
                        .session
                        .file_identity()
                        .is_some_and(|(origin, hash)| origin == path && hash == sha256)
            })
            .map(|(handle, _)| handle.clone())
    }

    /// Whether some session resumed from the store serves the file found at `path` (its real
    /// path).
    pub fn has_file(&self, path: &Path) -> bool {
        self.lock().values().any(|entry| {
            entry.resumed
                && entry
                    .session
                    .file_identity()
                    .is_some_and(|(origin, _)| origin == path)
        })
    }

    /// Every open session that holds something (a binary, Evidence or unknowns) with what
    /// `list_sessions` shows of it, in handle order.
    pub fn summaries(&self) -> Vec<(SessionHandle, SessionSummary)> {
        let sessions: Vec<(SessionHandle, Arc<Session>)> = self
            .lock()
            .iter()
            .map(|(handle, entry)| (handle.clone(), Arc::clone(&entry.session)))
            .collect();
        sessions
            .into_iter()
            .map(|(handle, session)| (handle, session.summary()))
            .filter(|(_, summary)| {
                summary.label.is_some() || summary.records > 0 || summary.unknowns > 0
            })
            .collect()
    }

    /// Declares `companions` in every session made from now on (see
    /// [`Session::set_companions`]): `rea serve --provider angr`.
    pub fn set_companions(&self, companions: Option<Arc<dyn Companions>>) {
        *self
            .companions
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = companions;
    }

    /// What [`SessionStore::set_companions`] set.
    pub fn companions(&self) -> Option<Arc<dyn Companions>> {
        self.companions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<SessionHandle, Entry>> {
        // Every update is one map operation, so a poisoned lock still guards a whole map.
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Most sessions open at once.
    pub fn max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// The budget every session's ledger draws on.
    pub fn budget(&self) -> &Arc<LedgerBudget> {
        &self.budget
    }

    /// A new session that is not open yet: it shares the store's budget and confinement, and
    /// [`SessionStore::admit`] makes it open. Work that may fail (opening a binary) runs on it
    /// first, so a failure leaves the store as it was.
    /// Its handle is made now, and its changes are committed to the store's [`Durable`].
    pub fn prepare(&self) -> Result<Arc<Session>, StoreError> {
        let journal = Journal {
            handle: SessionHandle::mint()?.0,
            durable: Arc::clone(&self.durable),
        };
        let session = Session::journaled(Arc::clone(&self.budget), journal);
        session.set_confinement(self.confinement());
        session.set_companions(self.companions());
        session.set_capture_approval(self.capture_approval);
        Ok(Arc::new(session))
    }

    /// Opens `session` under its handle (made by [`SessionStore::prepare`]), or a new one.
    pub fn admit(&self, session: Arc<Session>) -> Result<SessionHandle, StoreError> {
        let handle = match session.journal_handle() {
            Some(handle) => SessionHandle(handle.to_owned()),
            None => SessionHandle::mint()?,
        };
        let mut sessions = self.lock();
        self.make_room(&mut sessions);
        if sessions.len() >= self.max_sessions {
            return Err(StoreError::TooMany {
                limit: self.max_sessions,
            });
        }
        sessions.insert(
            handle.clone(),
            Entry {
                session,
                used: Instant::now(),
                resumed: false,
                held: true,
            },
        );
        Ok(handle)
    }

    /// A new, empty, open session.
    pub fn create(&self) -> Result<(SessionHandle, Arc<Session>), StoreError> {
        let session = self.prepare()?;
        let handle = self.admit(Arc::clone(&session))?;
        Ok((handle, session))
    }

    /// Whether another session may be opened now.
    pub fn has_room(&self) -> bool {
        self.lock().len() < self.max_sessions
    }

    /// The open session named `handle` (which counts as using it). In a store every process
    /// serves every session of (PostgreSQL), a session another instance opened is loaded, and
    /// one another instance changed is read afresh, first.
    pub fn get(&self, handle: &str) -> Result<Arc<Session>, StoreError> {
        let found = self
            .lock()
            .iter_mut()
            .find(|(open, _)| open.as_str() == handle)
            .map(|(_, entry)| {
                entry.used = Instant::now();
                Arc::clone(&entry.session)
            });
        match found {
            Some(session) if self.durable.serves_any() => self.fresh(handle, session),
            Some(session) => Ok(session),
            None if self.durable.serves_any() => self.hold(handle),
            None => Err(StoreError::Unknown {
                handle: handle.into(),
            }),
        }
    }

    /// Ends every session no request has used for `idle` or longer (the idle time-out of
    /// sessions served over HTTP) and returns their handles.
    pub fn end_idle(&self, idle: Duration) -> Vec<SessionHandle> {
        let now = Instant::now();
        let mut sessions = self.lock();
        let expired: Vec<SessionHandle> = sessions
            .iter()
            .filter(|(_, entry)| now.saturating_duration_since(entry.used) >= idle)
            .map(|(handle, _)| handle.clone())
            .collect();
        for handle in &expired {
            sessions.remove(handle);
        }
        expired
    }

    /// The handle of the open session `handle` names, if it is open.
    pub fn handle(&self, handle: &str) -> Option<SessionHandle> {
        self.lock()
            .keys()
            .find(|open| open.as_str() == handle)
            .cloned()
    }

    /// Ends the session `handle` (it is no longer open; its memory goes when the last call
    /// using it finishes). Returns it when it was open.
    pub fn end(&self, handle: &SessionHandle) -> Option<Arc<Session>> {
        self.lock().remove(handle).map(|entry| entry.session)
    }

    /// How many sessions are open.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no session is open.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Confines every open session, and every later one, to `confinement`.
    pub fn set_confinement(&self, confinement: Confinement) {
        let sessions: Vec<Arc<Session>> = self
            .lock()
            .values()
            .map(|entry| Arc::clone(&entry.session))
            .collect();
        *self
            .confinement
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = confinement.clone();
        for session in sessions {
            session.set_confinement(confinement.clone());
        }
    }

    /// Who approves `run_process_capture` runs in every session.
    pub fn capture_approval(&self) -> CaptureApproval {
        self.capture_approval
    }

    /// The confinement new sessions start with.
    pub fn confinement(&self) -> Confinement {
        self.confinement
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// The handles of the binary sessions one client knows: those it opened or named, in that
/// order, and *its session* (the one it opened or named last), which a request naming no
/// session uses.
#[derive(Debug, Default)]
pub struct ClientHandles {
    state: Mutex<ClientState>,
    /// Whether completion may offer the handles (stdio: one client per process); over HTTP a
    /// handle is a bearer token and is never listed.
    unlisted: bool,
}

#[derive(Debug, Default)]
struct ClientState {
    current: Option<SessionHandle>,
    known: Vec<SessionHandle>,
}

impl ClientHandles {
    /// A client that knows no session yet.
    pub fn new() -> ClientHandles {
        ClientHandles::default()
    }

    /// A client whose handles completion never offers (a client over HTTP, where a handle is
    /// a bearer token).
    pub fn unlisted() -> ClientHandles {
        ClientHandles {
            unlisted: true,
            ..ClientHandles::default()
        }
    }

    /// Whether this client's handles are never listed (a client over HTTP).
    pub fn is_unlisted(&self) -> bool {
        self.unlisted
    }

    /// The handles this client knows, open or not, in the order it first named them.
    pub fn known(&self) -> Vec<SessionHandle> {
        self.lock().known.clone()
    }

    fn lock(&self) -> MutexGuard<'_, ClientState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The client's session, if it has one.
    pub fn current(&self) -> Option<SessionHandle> {
        self.lock().current.clone()
    }

    /// Makes `handle` the client's session (it opened or named it).
    pub fn name(&self, handle: &SessionHandle) {
        let mut state = self.lock();
        if !state.known.contains(handle) {
            state.known.push(handle.clone());
        }
        state.current = Some(handle.clone());
    }

    /// Forgets `handle` (its session ended).
    pub fn forget(&self, handle: &SessionHandle) {
        let mut state = self.lock();
        state.known.retain(|known| known != handle);
        if state.current.as_ref() == Some(handle) {
            state.current = None;
        }
    }

    /// The handles this client knows that are still open in `store`, in the order it first
    /// named them: what completion of a `session` argument offers.
    pub fn open_handles(&self, store: &SessionStore) -> Vec<String> {
        if self.unlisted {
            return Vec::new();
        }
        let known = self.lock().known.clone();
        known
            .iter()
            .filter(|handle| store.handle(handle.as_str()).is_some())
            .map(|handle| handle.as_str().to_owned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_matches_the_rfc_vectors() {
        // RFC 4648 section 10, unpadded, with the URL alphabet.
        for (input, expected) in [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64url(input.as_bytes()), expected);
        }
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn handles_are_prefixed_22_base64url_characters_and_differ() {
        let first = SessionHandle::mint().unwrap();
        let second = SessionHandle::mint().unwrap();
        assert_ne!(first, second);
        let body = first.as_str().strip_prefix(HANDLE_PREFIX).unwrap();
        assert_eq!(body.len(), 22);
        assert!(
            body.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert!(!format!("{first:?}").contains(body));
    }
}
