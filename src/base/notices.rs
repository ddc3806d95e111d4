//! Notices a client should see about one request: a provider call that timed out, a bound
//! that cut a result short, a path the confinement refused.
//!
//! Work notes them where it learns of them ([`note`]); the shell runs each request's work
//! inside [`collect`] and sends what was noted as `notifications/message` to a client that
//! asked for messages at that level (docs/CONTRACT.md section 8c). Noting without a collector
//! (a library caller, `rea complete`) does nothing. The collector belongs to the thread that
//! runs the work, so notes of one request never reach another; at most
//! [`MAX_NOTICES_PER_REQUEST`] are kept per request. Nothing here does I/O: stderr stays the
//! operator's log.

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::Duration;

use crate::text::Quoted;

/// Most notices one request keeps (the rest are counted in the last).
pub const MAX_NOTICES_PER_REQUEST: usize = 8;

/// How severe a notice is (the shell maps it to a log level).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Normal but significant: a result is complete as far as a bound let it go.
    Notice,
    /// Something the client should act on: data is missing from an answer.
    Warning,
}

/// One notice.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Notice {
    /// A provider call ran past the time bound; its answer is missing.
    #[error(
        "provider {} did not answer within {} ms; its candidates are missing from this answer",
        .provider, .timeout.as_millis()
    )]
    ProviderTimedOut {
        /// The provider's id.
        provider: Quoted,
        /// The bound it ran past.
        timeout: Duration,
    },
    /// A provider was not called because an earlier call of it is still running past its time
    /// bound.
    #[error(
        "provider {} was not asked: an earlier call of it is still running past its time bound; its candidates are missing from this answer",
        .provider
    )]
    ProviderOverrunning {
        /// The provider's id.
        provider: Quoted,
    },
    /// A tool's result stopped at a bound: more may match than it returned.
    #[error(
        "{tool} stopped early at a bound (limit {limit}, or its scan bound); more may match: narrow the query or raise limit"
    )]
    ResultCut {
        /// The tool.
        tool: &'static str,
        /// The bound.
        limit: usize,
    },
    /// A path lies outside the allowed roots.
    #[error(
        "{} is outside the allowed roots ({}); it was not opened",
        .path, list_roots(.roots)
    )]
    ConfinementRefused {
        /// The path, as asked for.
        path: Quoted,
        /// The allowed roots.
        roots: Vec<PathBuf>,
    },
    /// The open binary's file lies outside the roots allowed now (the client's roots
    /// narrowed): its tools answer an error and its completions are empty.
    #[error(
        "the open binary {:?} lies outside the allowed roots ({}); its tools answer an error and \
         its completions are empty until the roots include it (open a file inside them, or \
         add a root that holds it)",
        .label, list_roots(.roots)
    )]
    BinaryOutsideRoots {
        /// The binary's label (its path as given).
        label: Quoted,
        /// The allowed roots.
        roots: Vec<PathBuf>,
    },
    /// More notices than [`MAX_NOTICES_PER_REQUEST`] were noted.
    #[error("{dropped} more notices about this request were dropped")]
    Dropped {
        /// How many.
        dropped: usize,
    },
}

impl Notice {
    /// How severe the notice is.
    pub fn severity(&self) -> Severity {
        match self {
            Notice::ProviderTimedOut { .. }
            | Notice::ProviderOverrunning { .. }
            | Notice::ConfinementRefused { .. }
            | Notice::BinaryOutsideRoots { .. } => Severity::Warning,
            Notice::ResultCut { .. } | Notice::Dropped { .. } => Severity::Notice,
        }
    }

    /// Whether the notice says why confinement refused something (a client hears each such
    /// cause once, whether or not it asked for messages).
    pub fn is_confinement(&self) -> bool {
        matches!(
            self,
            Notice::ConfinementRefused { .. } | Notice::BinaryOutsideRoots { .. }
        )
    }
}

/// Most roots a message lists (a client declares the roots).
const LISTED_ROOTS: usize = 8;

/// The roots as a message lists them: each cut like caller text, at most [`LISTED_ROOTS`].
pub(crate) fn list_roots(roots: &[PathBuf]) -> String {
    if roots.is_empty() {
        return "none".to_owned();
    }
    let mut names: Vec<String> = roots
        .iter()
        .take(LISTED_ROOTS)
        .map(|root| Quoted::path(root).to_string())
        .collect();
    if roots.len() > LISTED_ROOTS {
        names.push(format!("and {} more", roots.len() - LISTED_ROOTS));
    }
    names.join(", ")
}

#[derive(Default)]
struct Collector {
    notices: Vec<Notice>,
    dropped: usize,
}

thread_local! {
    static COLLECTOR: RefCell<Option<Collector>> = const { RefCell::new(None) };
}

/// Runs `work` and returns what it noted on this thread (a collection inside another one
/// takes the inner notes; the outer one keeps its own).
pub fn collect<T>(work: impl FnOnce() -> T) -> (T, Vec<Notice>) {
    let outer = COLLECTOR.with(|collector| collector.replace(Some(Collector::default())));
    let value = work();
    let collected = COLLECTOR.with(|collector| collector.replace(outer));
    let mut notices = Vec::new();
    if let Some(collected) = collected {
        notices = collected.notices;
        if collected.dropped > 0 {
            notices.push(Notice::Dropped {
                dropped: collected.dropped,
            });
        }
    }
    (value, notices)
}

/// Notes `notice` for the request this thread works on (nothing when none collects, and
/// nothing when the request noted the same notice already).
pub fn note(notice: Notice) {
    COLLECTOR.with(|collector| {
        if let Some(collector) = collector.borrow_mut().as_mut() {
            if collector.notices.contains(&notice) {
                return;
            }
            if collector.notices.len() < MAX_NOTICES_PER_REQUEST - 1 {
                collector.notices.push(notice);
            } else {
                collector.dropped += 1;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Whatever is noted, a collection returns at most the cap, in noting order, counts
        /// what it dropped, and leaves nothing behind for the next one.
        #[test]
        fn collections_are_bounded_and_separate(count in 0usize..40) {
            let ((), notices) = collect(|| {
                for limit in 0..count {
                    note(Notice::ResultCut { tool: "search_strings", limit });
                }
            });
            prop_assert!(notices.len() <= MAX_NOTICES_PER_REQUEST);
            let kept = count.min(MAX_NOTICES_PER_REQUEST - 1);
            for (at, notice) in notices.iter().take(kept).enumerate() {
                prop_assert_eq!(notice, &Notice::ResultCut { tool: "search_strings", limit: at });
            }
            if count > kept {
                prop_assert_eq!(notices.last(), Some(&Notice::Dropped { dropped: count - kept }));
            }
            let ((), next) = collect(|| ());
            prop_assert!(next.is_empty());
            note(Notice::ResultCut { tool: "x", limit: 1 });
        }
    }

    #[test]
    fn a_request_keeps_one_of_each_notice() {
        let refused = || Notice::ConfinementRefused {
            path: Quoted::path(std::path::Path::new("/bin/ls")),
            roots: Vec::new(),
        };
        let ((), notices) = collect(|| {
            note(refused());
            note(refused());
        });
        assert_eq!(notices, vec![refused()]);
        assert!(refused().is_confinement());
    }
}
