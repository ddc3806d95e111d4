//! [`LedgerBudget`]: one memory budget that several Evidence ledgers draw on.

use std::sync::atomic::{AtomicUsize, Ordering};

/// One memory budget for the Evidence of every ledger that shares it
/// ([`crate::session::MAX_LEDGER_BYTES`] by default), counted as
/// [`record_cost`](crate::session::record_cost) counts a record.
#[derive(Debug)]
pub struct LedgerBudget {
    used: AtomicUsize,
    limit: usize,
    /// Most bytes one ledger may hold of `limit` (`limit` itself when unshared).
    share: usize,
}

impl LedgerBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> LedgerBudget {
        LedgerBudget::shared(limit, limit)
    }

    /// A budget of `limit` bytes of which one ledger may hold at most `share` (so one
    /// client filling its ledger leaves room for the others'; over HTTP a quarter).
    pub fn shared(limit: usize, share: usize) -> LedgerBudget {
        LedgerBudget {
            used: AtomicUsize::new(0),
            limit,
            share: share.clamp(1, limit.max(1)),
        }
    }

    /// Most bytes one ledger may hold.
    pub fn share(&self) -> usize {
        self.share
    }

    /// Bytes the ledgers sharing this budget retain.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// The limit in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Takes `bytes` for a ledger that holds `held` already, or refuses (taking nothing) when
    /// they do not fit its share or the budget.
    pub(crate) fn try_take_for(&self, held: usize, bytes: usize) -> Take {
        // Unshared, a ledger past the limit is simply full.
        if self.share < self.limit && held.saturating_add(bytes) > self.share {
            return Take::OverShare;
        }
        if self.try_take(bytes) {
            Take::Granted
        } else {
            Take::Full
        }
    }

    /// Takes `bytes` from the budget, or refuses (taking nothing) when they do not fit.
    fn try_take(&self, bytes: usize) -> bool {
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

/// What [`LedgerBudget::try_take_for`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Take {
    /// The bytes are taken.
    Granted,
    /// The ledger would hold more than its share.
    OverShare,
    /// The ledgers together would hold more than the limit.
    Full,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_refuses_what_does_not_fit_and_takes_nothing() {
        let budget = LedgerBudget::new(10);
        assert_eq!(budget.try_take_for(0, 6), Take::Granted);
        assert_eq!(budget.try_take_for(0, 5), Take::Full);
        assert_eq!(budget.used(), 6);
        budget.give_back(6);
        assert_eq!(budget.try_take_for(0, 10), Take::Granted);
    }

    #[test]
    fn one_ledger_cannot_take_more_than_its_share_and_the_others_still_can() {
        let budget = LedgerBudget::shared(100, 25);
        assert_eq!(budget.try_take_for(0, 25), Take::Granted);
        assert_eq!(budget.try_take_for(25, 1), Take::OverShare);
        assert_eq!(budget.used(), 25, "a refusal takes nothing");
        for _ in 0..3 {
            assert_eq!(budget.try_take_for(0, 25), Take::Granted);
        }
        assert_eq!(budget.try_take_for(0, 1), Take::Full);
    }
}
