//! A provider whose `list_documents` calls wait at a gate the test opens: requests that stay
//! in flight for as long as a test needs, without timing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use rea::core::{ProcedureEntry, ProcedurePage};
use rea::session::{DocumentInfo, Operation, Provider, ProviderError};

/// A gate that holds every caller until it is opened.
#[derive(Default)]
pub struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Gate {
    pub fn wait(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.opened.wait(open).unwrap();
        }
    }

    pub fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
}

/// A provider whose `list_documents` calls wait at the gate (all of them, or only the first),
/// counting calls and the most calls running at once.
pub struct GatedProvider {
    pub gate: Gate,
    only_first: bool,
    pub calls: AtomicUsize,
    pub running: AtomicUsize,
    pub most_running: AtomicUsize,
}

impl GatedProvider {
    pub fn new(only_first: bool) -> Arc<GatedProvider> {
        Arc::new(GatedProvider {
            gate: Gate::default(),
            only_first,
            calls: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            most_running: AtomicUsize::new(0),
        })
    }
}

impl Provider for GatedProvider {
    fn id(&self) -> &str {
        "gated"
    }

    fn supports(&self, operation: Operation) -> bool {
        matches!(
            operation,
            Operation::ListDocuments | Operation::ListProcedures
        )
    }

    fn list_documents(&self) -> Result<Vec<DocumentInfo>, ProviderError> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        let running = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_running.fetch_max(running, Ordering::SeqCst);
        // The session lists documents once when it opens the provider: never gate that call.
        if call > 0 && !(self.only_first && call > 1) {
            self.gate.wait();
        }
        self.running.fetch_sub(1, Ordering::SeqCst);
        Ok(vec![DocumentInfo::named("app")])
    }

    fn list_procedures(
        &self,
        _document: &str,
        _cursor: Option<&str>,
        _limit: usize,
    ) -> Result<ProcedurePage, ProviderError> {
        Ok(ProcedurePage {
            entries: vec![ProcedureEntry::new("0x1000", Some("main"))],
            next_cursor: None,
        })
    }
}
