//! [`Cancel`]: the cancellation signal of one request.
//!
//! The MCP shell hands each request a `Cancel`; `notifications/cancelled` sets it. Long work
//! checks it at natural points (between pages, files, chunks) and stops; work that changes the
//! session claims the commit ([`Cancel::commit`]) under the session's lock right before it
//! changes anything, so a request either committed before the cancellation arrived (and is
//! answered) or never commits (and is not answered).
//!
//! ```
//! use rea::Cancel;
//!
//! let cancel = Cancel::new();
//! assert!(cancel.check().is_ok());
//! cancel.clone().cancel();
//! assert!(cancel.is_cancelled() && cancel.check().is_err() && cancel.commit().is_err());
//!
//! let committed = Cancel::new();
//! assert!(committed.commit().is_ok());
//! committed.cancel(); // too late: the effect is there
//! assert!(!committed.is_cancelled() && committed.is_committed());
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// A shared cancellation flag: clones observe the same flag.
///
/// Cancelling and committing race for one atomic state, so exactly one of them wins: a
/// request whose [`Cancel::commit`] succeeded is answered even when a cancellation arrives
/// later (MCP lets a server answer a request it was asked to cancel), and a request cancelled
/// first never commits and is never answered.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicU8>);

/// Neither cancelled nor committed.
const RUNNING: u8 = 0;
/// Cancelled before any commit: the work must not commit and is not answered.
const CANCELLED: u8 = 1;
/// Committed (or about to): a later cancellation changes nothing.
const COMMITTED: u8 = 2;

/// The work was cancelled before it committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the request was cancelled")]
pub struct Cancelled;

impl Cancel {
    /// A flag that is not set.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// A flag that is never set (for callers that cannot cancel).
    pub fn never() -> Cancel {
        Cancel::default()
    }

    /// Sets the flag; every clone sees it. After a successful [`Cancel::commit`] it changes
    /// nothing: the effect is there and the answer will say so.
    pub fn cancel(&self) {
        let _ = self
            .0
            .compare_exchange(RUNNING, CANCELLED, Ordering::AcqRel, Ordering::Acquire);
    }

    /// Whether the flag was set before any commit.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire) == CANCELLED
    }

    /// `Err(Cancelled)` when the flag is set: use with `?` at natural stopping points.
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }

    /// Claims the right to commit: `Err(Cancelled)` when the flag was set first, else the
    /// flag can no longer be set. Call it under the lock that guards the change, right before
    /// changing anything, after every check that could fail.
    pub fn commit(&self) -> Result<(), Cancelled> {
        match self
            .0
            .compare_exchange(RUNNING, COMMITTED, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => Ok(()),
            Err(CANCELLED) => Err(Cancelled),
            Err(_) => Ok(()),
        }
    }

    /// Whether a commit succeeded.
    pub fn is_committed(&self) -> bool {
        self.0.load(Ordering::Acquire) == COMMITTED
    }
}
