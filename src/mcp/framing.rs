//! Newline-delimited framing with a maximum line length.
//!
//! A line longer than the maximum is skipped to its newline without being buffered whole:
//! the reader keeps at most `max_line_bytes` bytes of any line in memory. The splitting rule
//! lives in one private `Framer`, shared by the async reader (any `AsyncBufRead`) and the blocking reader
//! of the dedicated stdin thread.

use std::io::BufRead;

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

/// The line-splitting state between reads.
#[derive(Debug)]
struct Framer {
    max_line_bytes: usize,
    line: Vec<u8>,
    length: usize,
}

impl Framer {
    fn new(max_line_bytes: usize) -> Framer {
        Framer {
            max_line_bytes,
            line: Vec::new(),
            length: 0,
        }
    }

    /// Takes bytes from `buffer` (non-empty): how many were consumed, and the frame they
    /// completed, if any. Blank lines complete no frame.
    fn feed(&mut self, buffer: &[u8]) -> (usize, Option<Frame>) {
        let (chunk, found_newline) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (&buffer[..at], true),
            None => (buffer, false),
        };
        self.length += chunk.len();
        if self.length <= self.max_line_bytes {
            self.line.extend_from_slice(chunk);
        } else if !self.line.is_empty() {
            self.line = Vec::new();
        }
        let consumed = chunk.len() + usize::from(found_newline);
        (consumed, if found_newline { self.take() } else { None })
    }

    /// The frame of the bytes since the last newline (at end of input), if any.
    fn take(&mut self) -> Option<Frame> {
        let length = std::mem::take(&mut self.length);
        let mut line = std::mem::take(&mut self.line);
        if length > self.max_line_bytes {
            return Some(Frame::TooLong { bytes: length });
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        Some(Frame::Line(line))
    }
}

/// Reads frames from an async buffered reader.
#[derive(Debug)]
pub struct LineReader<R> {
    reader: R,
    framer: Framer,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// A reader that rejects lines longer than `max_line_bytes`.
    pub fn new(reader: R, max_line_bytes: usize) -> LineReader<R> {
        LineReader {
            reader,
            framer: Framer::new(max_line_bytes),
        }
    }

    /// The next frame, or `None` at end of input. Blank lines are skipped.
    pub async fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            let buffer = self.reader.fill_buf().await?;
            if buffer.is_empty() {
                return Ok(self.framer.take());
            }
            let (consumed, frame) = self.framer.feed(buffer);
            self.reader.consume(consumed);
            if frame.is_some() {
                return Ok(frame);
            }
        }
    }
}

/// Reads frames from a blocking buffered reader (the dedicated stdin thread).
#[derive(Debug)]
pub struct BlockingLineReader<R> {
    reader: R,
    framer: Framer,
}

impl<R: BufRead> BlockingLineReader<R> {
    /// A reader that rejects lines longer than `max_line_bytes`.
    pub fn new(reader: R, max_line_bytes: usize) -> BlockingLineReader<R> {
        BlockingLineReader {
            reader,
            framer: Framer::new(max_line_bytes),
        }
    }

    /// The next frame, or `None` at end of input. Blank lines are skipped.
    pub fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            let buffer = match self.reader.fill_buf() {
                Ok(buffer) => buffer,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            if buffer.is_empty() {
                return Ok(self.framer.take());
            }
            let (consumed, frame) = self.framer.feed(buffer);
            self.reader.consume(consumed);
            if frame.is_some() {
                return Ok(frame);
            }
        }
    }
}
