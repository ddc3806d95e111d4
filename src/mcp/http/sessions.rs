//! The MCP sessions of 2025 clients over HTTP, by `Mcp-Session-Id`: each is a connection (its
//! negotiated version, log threshold, its binary sessions) plus its requests in flight and the
//! queue its GET stream drains.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::super::connection::{ConnectionCore, Dispatcher, InFlight};
use super::super::outlet::Drain;
use super::super::state::Connection;

/// One 2025 client's MCP session (the protocol's session, named by `Mcp-Session-Id`; not a
/// binary [`crate::session::Session`], some of which it names through its connection's
/// [`crate::session::ClientHandles`]).
#[derive(Debug)]
pub(crate) struct ProtocolSession {
    /// Its id (`Mcp-Session-Id`).
    pub(crate) id: String,
    pub(crate) connection: Arc<Connection>,
    /// Its requests in flight, for `notifications/cancelled` and duplicate ids.
    pub(crate) in_flight: Arc<InFlight>,
    /// What its GET stream sends (unsolicited notifications); taken while a GET
    /// stream is open.
    stream: Mutex<Option<Drain>>,
    /// When the last activity ended (or the latest began, while none runs).
    used: Mutex<Instant>,
    /// Requests running and GET streams open: while any is, the session is not idle.
    active: AtomicUsize,
    /// Whether it made a request after `initialize` (or opened a GET stream).
    worked: AtomicBool,
}

/// One activity of an MCP session (a request running, a GET stream open): while it lives the
/// session is not idle, and its end counts as the session's last use.
#[derive(Debug)]
pub(crate) struct Activity {
    session: Arc<ProtocolSession>,
}

impl Drop for Activity {
    fn drop(&mut self) {
        self.session.touch();
        self.session.active.fetch_sub(1, Ordering::AcqRel);
    }
}

impl ProtocolSession {
    pub(crate) fn new(id: String, connection: Arc<Connection>, stream: Drain) -> ProtocolSession {
        ProtocolSession {
            id,
            connection,
            in_flight: Arc::new(InFlight::default()),
            stream: Mutex::new(Some(stream)),
            used: Mutex::new(Instant::now()),
            active: AtomicUsize::new(0),
            worked: AtomicBool::new(false),
        }
    }

    /// The connection core of this session's messages, with `dispatcher`'s method table.
    pub(crate) fn core(&self, dispatcher: &Dispatcher) -> ConnectionCore {
        ConnectionCore {
            connection: Arc::clone(&self.connection),
            in_flight: Arc::clone(&self.in_flight),
            dispatcher: dispatcher.clone(),
        }
    }

    /// Marks an activity of this session until the guard is dropped (a request after
    /// `initialize`, a GET stream): from now on it idles out after the full time-out.
    pub(crate) fn activity(self: &Arc<Self>) -> Activity {
        self.worked.store(true, Ordering::Release);
        self.active.fetch_add(1, Ordering::AcqRel);
        self.touch();
        Activity {
            session: Arc::clone(self),
        }
    }

    /// The GET stream's queue, unless a GET stream already holds it.
    pub(crate) fn take_stream(&self) -> Option<Drain> {
        lock(&self.stream).take()
    }

    /// Gives the queue back when a GET stream ends.
    pub(crate) fn return_stream(&self, drain: Drain) {
        *lock(&self.stream) = Some(drain);
    }

    fn touch(&self) {
        *lock(&self.used) = Instant::now();
    }

    /// Whether it made no request after `initialize` and runs nothing.
    fn unused(&self) -> bool {
        !self.worked.load(Ordering::Acquire) && self.active.load(Ordering::Acquire) == 0
    }

    /// How long the session has been idle: zero while an activity runs, else since the end
    /// of the last one (or the last request).
    fn idle_for(&self, now: Instant) -> Duration {
        if self.active.load(Ordering::Acquire) > 0 {
            return Duration::ZERO;
        }
        now.saturating_duration_since(*lock(&self.used))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update is one assignment, so a poisoned lock still guards a whole value.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The live MCP sessions, at most `max` at once.
#[derive(Debug)]
pub(crate) struct ProtocolSessions {
    sessions: Mutex<HashMap<String, Arc<ProtocolSession>>>,
    max: usize,
}

impl ProtocolSessions {
    pub(crate) fn new(max: usize) -> ProtocolSessions {
        ProtocolSessions {
            sessions: Mutex::new(HashMap::new()),
            max: max.max(1),
        }
    }

    /// The most sessions live at once.
    pub(crate) fn limit(&self) -> usize {
        self.max
    }

    /// Adds `session`. When `max` sessions are live, the unused one (no request after
    /// `initialize`) idle the longest gives way, and is returned to be ended; with none
    /// unused, `session` is given back.
    pub(crate) fn insert(
        &self,
        session: Arc<ProtocolSession>,
    ) -> Result<Option<Arc<ProtocolSession>>, Arc<ProtocolSession>> {
        let mut sessions = lock(&self.sessions);
        let mut evicted = None;
        if sessions.len() >= self.max {
            let now = Instant::now();
            let oldest_unused = sessions
                .values()
                .filter(|live| live.unused())
                .max_by_key(|live| (live.idle_for(now), std::cmp::Reverse(live.id.clone())))
                .map(|live| live.id.clone());
            let Some(id) = oldest_unused else {
                return Err(session);
            };
            evicted = sessions.remove(&id);
        }
        sessions.insert(session.id.clone(), session);
        Ok(evicted)
    }

    /// The live session `id` (which counts as using it).
    pub(crate) fn get(&self, id: &str) -> Option<Arc<ProtocolSession>> {
        let session = lock(&self.sessions).get(id).cloned()?;
        session.touch();
        Some(session)
    }

    /// Ends session `id`; returns it when it was live.
    pub(crate) fn remove(&self, id: &str) -> Option<Arc<ProtocolSession>> {
        lock(&self.sessions).remove(id)
    }

    /// Ends every session idle for `idle` or longer, or unused for `unused_idle` (a client
    /// that initializes and goes away, or initializes many, must not hold the sessions for
    /// the whole idle time-out), and returns them; none with a request running or a GET
    /// stream open ends.
    pub(crate) fn remove_idle(
        &self,
        idle: Duration,
        unused_idle: Duration,
    ) -> Vec<Arc<ProtocolSession>> {
        let now = Instant::now();
        let mut sessions = lock(&self.sessions);
        let expired: Vec<String> = sessions
            .values()
            .filter(|session| {
                let idle_for = session.idle_for(now);
                idle_for >= idle || (session.unused() && idle_for >= unused_idle)
            })
            .map(|session| session.id.clone())
            .collect();
        expired
            .iter()
            .filter_map(|id| sessions.remove(id))
            .collect()
    }

    /// Ends every session and returns them.
    pub(crate) fn remove_all(&self) -> Vec<Arc<ProtocolSession>> {
        lock(&self.sessions)
            .drain()
            .map(|(_, session)| session)
            .collect()
    }

    /// Whether a live session other than `except` knows the binary session `handle`.
    pub(crate) fn another_knows(
        &self,
        handle: &crate::session::SessionHandle,
        except: &str,
    ) -> bool {
        lock(&self.sessions)
            .values()
            .filter(|session| session.id != except)
            .any(|session| session.connection.sessions.known().contains(handle))
    }
}
