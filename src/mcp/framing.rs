//! Newline-delimited framing with a maximum line length.
//!
//! A line longer than the maximum is skipped to its newline without being buffered whole:
//! the reader keeps at most `max_line_bytes` bytes of any line in memory.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Default maximum line length: 4 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// One frame read from the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete line, without its `\n` (and without a trailing `\r`).
    Line(Vec<u8>),
    /// A line over the maximum, skipped; `bytes` is its full length.
    TooLong {
        /// Length of the skipped line in bytes.
        bytes: usize,
    },
}

/// Reads frames from a buffered reader.
#[derive(Debug)]
pub struct LineReader<R> {
    reader: R,
    max_line_bytes: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// A reader that rejects lines longer than `max_line_bytes`.
    pub fn new(reader: R, max_line_bytes: usize) -> LineReader<R> {
        LineReader {
            reader,
            max_line_bytes,
        }
    }

    /// The next frame, or `None` at end of input. Blank lines are skipped.
    pub async fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            let mut line = Vec::new();
            let mut length = 0usize;
            let mut ended = false;
            loop {
                let buffer = self.reader.fill_buf().await?;
                if buffer.is_empty() {
                    ended = true;
                    break;
                }
                let (chunk, found_newline) = match buffer.iter().position(|&b| b == b'\n') {
                    Some(at) => (&buffer[..at], true),
                    None => (buffer, false),
                };
                length += chunk.len();
                if length <= self.max_line_bytes {
                    line.extend_from_slice(chunk);
                } else if !line.is_empty() {
                    line = Vec::new();
                }
                let consumed = chunk.len() + usize::from(found_newline);
                self.reader.consume(consumed);
                if found_newline {
                    break;
                }
            }
            if length > self.max_line_bytes {
                return Ok(Some(Frame::TooLong { bytes: length }));
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                if ended {
                    return Ok(None);
                }
                continue;
            }
            return Ok(Some(Frame::Line(line)));
        }
    }
}
