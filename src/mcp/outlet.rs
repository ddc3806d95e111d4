//! The output side: one bounded queue of whole lines and the one writer that drains it.
//!
//! Requests wait when the queue is full, so a client that stops reading stops the server
//! (memory never grows). Notifications raised outside a request (`list_changed` from another
//! thread) never wait: when the queue is full they are remembered, each line once, and the
//! writer sends them after the next line.

use std::io::Write;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// Notification lines that found the queue full, each line once (a change notification says
/// the same however often it is raised).
#[derive(Debug, Default)]
struct Pending(Mutex<Vec<String>>);

impl Pending {
    fn remember(&self, line: String) {
        let mut lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !lines.contains(&line) {
            lines.push(line);
        }
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The sending end: queues whole lines for the writer.
#[derive(Clone, Debug)]
pub(crate) struct Outlet {
    lines: mpsc::Sender<String>,
    pending: Arc<Pending>,
}

/// The receiving end, owned by the one writer.
#[derive(Debug)]
pub(crate) struct Drain {
    lines: mpsc::Receiver<String>,
    pending: Arc<Pending>,
}

/// A queue of at most `capacity` lines.
pub(crate) fn outlet(capacity: usize) -> (Outlet, Drain) {
    let (sender, receiver) = mpsc::channel(capacity.max(1));
    let pending = Arc::new(Pending::default());
    (
        Outlet {
            lines: sender,
            pending: Arc::clone(&pending),
        },
        Drain {
            lines: receiver,
            pending,
        },
    )
}

fn notification_line(method: &str) -> String {
    serde_json::json!({ "jsonrpc": "2.0", "method": method }).to_string()
}

impl Outlet {
    /// Queues `line`, waiting while the queue is full. A closed writer means the connection
    /// is gone; nothing is left to tell then.
    pub(crate) async fn send(&self, line: String) {
        let _ = self.lines.send(line).await;
    }

    /// Queues a notification without waiting.
    pub(crate) fn notify(&self, method: &'static str) {
        self.notify_line(notification_line(method));
    }

    /// Queues a whole notification line without waiting.
    pub(crate) fn notify_line(&self, line: String) {
        if let Err(error) = self.lines.try_send(line) {
            self.pending.remember(error.into_inner());
        }
    }

    /// Resolves when the writer is gone (the output failed, e.g. the client closed it): no
    /// answer can reach the client any more.
    pub(crate) async fn closed(&self) {
        self.lines.closed().await;
    }

    /// Tells the writer that nothing more will come, waiting at most `grace` for room in the
    /// queue (a client that stopped reading may never make room).
    pub(crate) async fn close(&self, grace: std::time::Duration) {
        let _ = tokio::time::timeout(grace, self.lines.send(String::new())).await;
    }
}

impl Drain {
    /// The next line, with the notifications that found the queue full before it; `None`
    /// when the queue closed (every sender gone, or the close mark).
    pub(crate) async fn next(&mut self) -> Option<Vec<String>> {
        let line = self.lines.recv().await.filter(|line| !line.is_empty())?;
        let mut lines = vec![line];
        lines.extend(self.pending.take());
        Some(lines)
    }

    /// The lines queued now, without waiting (the notifications that found the queue full
    /// included).
    pub(crate) fn queued(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        while let Ok(line) = self.lines.try_recv() {
            if !line.is_empty() {
                lines.push(line);
            }
        }
        lines.extend(self.pending.take());
        lines
    }

    /// Writes every line to `output` until the queue closes (an empty line marks the close),
    /// flushing whenever the queue is empty.
    pub(crate) async fn write_to<W: AsyncWrite + Unpin>(
        mut self,
        mut output: W,
    ) -> std::io::Result<()> {
        while let Some(line) = self.lines.recv().await {
            if line.is_empty() {
                break;
            }
            for line in std::iter::once(line).chain(self.pending.take()) {
                output.write_all(line.as_bytes()).await?;
                output.write_all(b"\n").await?;
            }
            if self.lines.is_empty() {
                output.flush().await?;
            }
        }
        output.flush().await
    }

    /// The blocking twin of [`Drain::write_to`], for the dedicated stdout thread.
    pub(crate) fn write_blocking<W: Write>(mut self, mut output: W) -> std::io::Result<()> {
        while let Some(line) = self.lines.blocking_recv() {
            if line.is_empty() {
                break;
            }
            for line in std::iter::once(line).chain(self.pending.take()) {
                output.write_all(line.as_bytes())?;
                output.write_all(b"\n")?;
            }
            if self.lines.is_empty() {
                output.flush()?;
            }
        }
        output.flush()
    }
}
