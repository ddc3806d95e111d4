//! The process's stdin and stdout, read and written on the async runtime when they can be.
//!
//! A client that starts `rea serve` connects its stdin and stdout to pipes (Rust's
//! `Command`, Python) or to socket pairs (Node's `child_process`, so Claude Desktop, the
//! Inspector and the TypeScript SDK). Both can be polled: [`PolledFd`] puts the descriptor in
//! non-blocking mode and registers it with the runtime's reactor, so a request is read,
//! answered and written by the worker the reactor woke, with no handoff to another thread
//! (each handoff wakes a sleeping thread, which cost more than the completion itself).
//!
//! A terminal, a regular file or `/dev/null` stays on the blocking path of dedicated threads
//! ([`PolledFd::stdin`] answers `None`): a terminal's file description is shared with the
//! shell, which must not find it non-blocking; a regular file cannot be polled. The previous
//! flags are put back when the [`PolledFd`] is dropped, since the file description is shared
//! with whoever else holds the other copies of the descriptor.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use rustix::fs::{FileType, OFlags};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A pipe or socket of the process's standard streams, non-blocking and polled by the
/// reactor, for as long as it lives.
#[derive(Debug)]
pub(crate) struct PolledFd {
    fd: AsyncFd<OwnedFd>,
    /// The status flags before `O_NONBLOCK` was added, put back on drop.
    previous: OFlags,
}

impl PolledFd {
    /// Stdin, when it is a pipe or a socket and the runtime can poll it.
    pub(crate) fn stdin() -> Option<PolledFd> {
        PolledFd::new(io::stdin().as_fd())
    }

    /// Stdout, when it is a pipe or a socket and the runtime can poll it.
    pub(crate) fn stdout() -> Option<PolledFd> {
        PolledFd::new(io::stdout().as_fd())
    }

    /// `fd` (duplicated) when it is a pipe or a socket; `None` for anything else, or when the
    /// reactor refuses it (no runtime, or a descriptor epoll does not take).
    fn new(fd: BorrowedFd<'_>) -> Option<PolledFd> {
        tokio::runtime::Handle::try_current().ok()?;
        let kind = FileType::from_raw_mode(rustix::fs::fstat(fd).ok()?.st_mode);
        if !matches!(kind, FileType::Fifo | FileType::Socket) {
            return None;
        }
        let owned = fd.try_clone_to_owned().ok()?;
        let previous = rustix::fs::fcntl_getfl(&owned).ok()?;
        rustix::fs::fcntl_setfl(&owned, previous | OFlags::NONBLOCK).ok()?;
        // SAFETY: the `AsyncFd` owns the descriptor (an `OwnedFd`, whose number never changes)
        // until it is dropped, so it stays open and names the same file description throughout.
        #[allow(unsafe_code)]
        let registered = unsafe { AsyncFd::register(owned) };
        match registered {
            Ok(fd) => Some(PolledFd { fd, previous }),
            Err(refused) => {
                let (owned, _) = refused.into_parts();
                let _ = rustix::fs::fcntl_setfl(&owned, previous);
                None
            }
        }
    }
}

impl Drop for PolledFd {
    fn drop(&mut self) {
        let _ = rustix::fs::fcntl_setfl(self.fd.get_ref(), self.previous);
    }
}

impl AsyncRead for PolledFd {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut ready = ready!(self.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            match ready.try_io(|fd| rustix::io::read(fd, &mut *unfilled).map_err(io::Error::from)) {
                Ok(Ok(read)) => {
                    buf.advance(read);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(error)) if error.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(error)) => return Poll::Ready(Err(error)),
                // Not readable after all: the readiness is cleared and polled again.
                Err(_would_block) => {}
            }
        }
    }
}

impl AsyncWrite for PolledFd {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut ready = ready!(self.fd.poll_write_ready(cx))?;
            match ready.try_io(|fd| rustix::io::write(fd, buf).map_err(io::Error::from)) {
                Ok(Err(error)) if error.kind() == io::ErrorKind::Interrupted => {}
                Ok(result) => return Poll::Ready(result),
                Err(_would_block) => {}
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Every write went to the descriptor; nothing is held here.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn a_socket_is_polled_and_its_flags_come_back() {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        let before = rustix::fs::fcntl_getfl(&ours).unwrap();
        let mut polled = PolledFd::new(ours.as_fd()).expect("a socket is polled");
        assert!(
            rustix::fs::fcntl_getfl(&ours)
                .unwrap()
                .contains(OFlags::NONBLOCK)
        );
        theirs.write_all(b"ping\n").unwrap();
        let mut line = [0u8; 5];
        polled.read_exact(&mut line).await.unwrap();
        assert_eq!(&line, b"ping\n");
        polled.write_all(b"pong\n").await.unwrap();
        let mut answer = [0u8; 5];
        theirs.read_exact(&mut answer).unwrap();
        assert_eq!(&answer, b"pong\n");
        drop(polled);
        assert_eq!(rustix::fs::fcntl_getfl(&ours).unwrap(), before);
    }

    #[tokio::test]
    async fn a_pipe_is_polled_and_a_file_is_not() {
        let (reader, writer) = std::io::pipe().unwrap();
        assert!(PolledFd::new(reader.as_fd()).is_some());
        assert!(PolledFd::new(writer.as_fd()).is_some());
        let file = tempfile::tempfile().unwrap();
        assert!(PolledFd::new(file.as_fd()).is_none());
        let null = std::fs::File::open("/dev/null").unwrap();
        assert!(PolledFd::new(null.as_fd()).is_none());
    }

    #[test]
    fn nothing_is_polled_outside_a_runtime() {
        let (ours, _theirs) = UnixStream::pair().unwrap();
        let before = rustix::fs::fcntl_getfl(&ours).unwrap();
        assert!(PolledFd::new(ours.as_fd()).is_none());
        assert_eq!(rustix::fs::fcntl_getfl(&ours).unwrap(), before);
    }
}
