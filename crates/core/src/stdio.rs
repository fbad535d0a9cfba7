//! Writes to the standard streams that a closed reader cannot turn into a
//! panic or an exit code.
//!
//! Rust ignores `SIGPIPE`, so a write to a pipe whose reader has gone
//! (`toolgate label --check DIR | head -1`, `2>&1 | tee f | head`) fails
//! with `EPIPE`, and `eprintln!` panics on a failed write (exit 101). The
//! command line's diagnostics go through [`eprint`] instead (the binary and
//! `toolgate-batch` shadow `eprintln!` with it), and its data through
//! [`QuietStdout`]: the command then runs to its end and exits with the
//! code its findings decide, whoever still reads.

use std::io::{ErrorKind, Write};

/// Writes `args` to stderr, ignoring a failed write: a diagnostic nobody
/// can read any more is dropped, it never stops the command.
pub fn eprint(args: std::fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// Stdout for a command's data: once its reader has closed the pipe,
/// every later write is dropped and reported as done, so that the command
/// finishes computing its findings (and exit code) instead of stopping at
/// the first failed write. Any other write error is returned.
pub struct QuietStdout {
    inner: std::io::StdoutLock<'static>,
    /// The reader has gone (`EPIPE`): nothing is written any more.
    closed: bool,
}

impl QuietStdout {
    /// Locks stdout for the command's data.
    pub fn lock() -> QuietStdout {
        QuietStdout {
            inner: std::io::stdout().lock(),
            closed: false,
        }
    }

    /// Whether the reader has closed the pipe.
    pub fn closed(&self) -> bool {
        self.closed
    }

    fn quiet<T>(&mut self, result: std::io::Result<T>, done: T) -> std::io::Result<T> {
        match result {
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(done)
            }
            other => other,
        }
    }
}

impl Write for QuietStdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let result = self.inner.write(buf);
        self.quiet(result, buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let result = self.inner.flush();
        self.quiet(result, ())
    }
}
