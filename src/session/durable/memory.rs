//! [`MemoryStore`]: a store that keeps everything in the process (`rea serve --store memory`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::rows::id_number;
use super::{Change, Durable, DurableError, Snapshot, StoredSession};

/// A store in memory: what it keeps goes with the process.
///
/// [`MemoryStore::new`] keeps nothing but the numbering: a server over it (`--store memory`)
/// behaves as one without a store, and its memory bounds are those of the sessions it holds.
/// [`MemoryStore::retaining`] keeps every session it is given until it is closed, so a
/// [`crate::session::SessionStore`] resumed from it in the same process sees every session it
/// committed (what tests of resume use without a disk).
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
    retains: bool,
}

#[derive(Debug, Default)]
struct Inner {
    sessions: BTreeMap<String, StoredSession>,
    binaries: BTreeMap<String, Arc<[u8]>>,
    next_evidence: u64,
    next_unknown: u64,
    next_annotation: u64,
    /// Tasks, by ID (kept only by a retaining store).
    tasks: BTreeMap<String, super::TaskRow>,
}

impl MemoryStore {
    /// A store that keeps nothing but the numbering.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// A store that keeps every session committed to it, with the bytes of its binary, until
    /// the session is closed.
    pub fn retaining() -> MemoryStore {
        MemoryStore {
            retains: true,
            ..MemoryStore::default()
        }
    }
}

impl Durable for MemoryStore {
    fn commit(&self, handle: &str, changes: &[Change<'_>]) -> Result<(), DurableError> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let inner = &mut *inner;
        let now = super::unix_now();
        for change in changes {
            match change {
                Change::Record(record) => {
                    inner.next_evidence =
                        inner.next_evidence.max(id_number(record.id.as_str()) + 1);
                }
                Change::Unknown(revision) => {
                    inner.next_unknown =
                        inner.next_unknown.max(id_number(revision.id.as_str()) + 1);
                }
                Change::Annotation(revision) => {
                    inner.next_annotation = inner
                        .next_annotation
                        .max(id_number(revision.id.as_str()) + 1);
                }
                _ => {}
            }
            if !self.retains {
                continue;
            }
            if let Change::Close = change {
                inner.sessions.remove(handle);
                let sessions = &inner.sessions;
                inner.binaries.retain(|hash, _| {
                    sessions.values().any(|s| {
                        s.binary
                            .as_ref()
                            .is_some_and(|b| b.sha256.as_deref() == Some(hash))
                    })
                });
                continue;
            }
            let session =
                inner
                    .sessions
                    .entry(handle.to_owned())
                    .or_insert_with(|| StoredSession {
                        handle: handle.to_owned(),
                        binary: None,
                        created: now,
                        used: now,
                        records: Vec::new(),
                        unknowns: Vec::new(),
                        annotations: Vec::new(),
                    });
            session.used = now;
            match *change {
                Change::Open {
                    replaces,
                    binary,
                    bytes,
                } => {
                    session.binary = Some(binary.clone());
                    if replaces {
                        session.records.clear();
                        session.unknowns.clear();
                        session.annotations.clear();
                    }
                    if let (Some(hash), Some(bytes)) = (&binary.sha256, bytes) {
                        inner
                            .binaries
                            .entry(hash.clone())
                            .or_insert_with(|| bytes.into());
                    }
                }
                Change::Current { provider, document } => {
                    if let Some(binary) = &mut session.binary {
                        binary.current_provider = provider.to_owned();
                        binary.current_document = Some(document.to_owned());
                    }
                }
                Change::Record(record) => session.records.push(Arc::clone(record)),
                Change::Unknown(revision) => {
                    match session.unknowns.iter_mut().find(|u| u.id == revision.id) {
                        Some(kept) => *kept = revision.clone(),
                        None => session.unknowns.push(revision.clone()),
                    }
                }
                Change::Annotation(revision) => session.annotations.push(revision.clone()),
                Change::Close => {}
            }
        }
        Ok(())
    }

    fn load(&self) -> Result<Snapshot, DurableError> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(Snapshot {
            sessions: inner.sessions.values().cloned().collect(),
            next_evidence: inner.next_evidence,
            next_unknown: inner.next_unknown,
            next_annotation: inner.next_annotation,
        })
    }

    fn binary(&self, sha256: &str) -> Result<Option<Vec<u8>>, DurableError> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(inner.binaries.get(sha256).map(|bytes| bytes.to_vec()))
    }

    fn keeps_binaries(&self) -> bool {
        self.retains
    }

    fn describe(&self) -> String {
        "memory".to_owned()
    }

    /// A retaining store keeps the row; the other keeps nothing (the shell holds its tasks).
    fn put_task(&self, row: &super::TaskRow) -> Result<(), DurableError> {
        if self.retains {
            let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
            let now = super::unix_now_ms();
            inner.tasks.retain(|_, kept| kept.expires_ms >= now);
            inner.tasks.insert(row.id.clone(), row.clone());
        }
        Ok(())
    }

    fn load_tasks(&self, now_ms: u64) -> Result<Vec<super::TaskRow>, DurableError> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.tasks.retain(|_, kept| kept.expires_ms >= now_ms);
        Ok(inner.tasks.values().cloned().collect())
    }
}
