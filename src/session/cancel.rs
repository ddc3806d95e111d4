//! [`Cancel`]: the cancellation signal of one request.
//!
//! The MCP shell hands each request a `Cancel`; `notifications/cancelled` sets it. Long work
//! checks it at natural points (between pages, files, chunks) and stops; work that changes the
//! session checks it once more right before it commits, so a cancelled request either committed
//! before the cancellation arrived or never commits.
//!
//! ```
//! use rea::session::Cancel;
//!
//! let cancel = Cancel::new();
//! assert!(cancel.check().is_ok());
//! cancel.clone().cancel();
//! assert!(cancel.is_cancelled() && cancel.check().is_err());
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A shared cancellation flag: clones observe the same flag.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

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

    /// Sets the flag; every clone sees it.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether the flag is set.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// `Err(Cancelled)` when the flag is set: use with `?` at natural stopping points.
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }
}
