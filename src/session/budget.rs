//! [`LedgerBudget`]: one memory budget that several Evidence ledgers draw on.

use std::sync::atomic::{AtomicUsize, Ordering};

/// One memory budget for the Evidence of every ledger that shares it
/// ([`crate::session::MAX_LEDGER_BYTES`] by default), counted as
/// [`record_cost`](crate::session::record_cost) counts a record.
#[derive(Debug)]
pub struct LedgerBudget {
    used: AtomicUsize,
    limit: usize,
}

impl LedgerBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> LedgerBudget {
        LedgerBudget {
            used: AtomicUsize::new(0),
            limit,
        }
    }

    /// Bytes the ledgers sharing this budget retain.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// The limit in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Takes `bytes` from the budget, or refuses (taking nothing) when they do not fit.
    pub(crate) fn try_take(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|&total| total <= self.limit)
            })
            .is_ok()
    }

    /// Returns `bytes` taken earlier.
    pub(crate) fn give_back(&self, bytes: usize) {
        let _ = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                Some(used.saturating_sub(bytes))
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_refuses_what_does_not_fit_and_takes_nothing() {
        let budget = LedgerBudget::new(10);
        assert!(budget.try_take(6));
        assert!(!budget.try_take(5));
        assert_eq!(budget.used(), 6);
        budget.give_back(6);
        assert!(budget.try_take(10));
    }
}
