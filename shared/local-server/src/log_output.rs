//! The local server's log output. Each line is copied into a buffer in memory under a lock; a
//! thread of its own writes the buffer to stdout every [`FLUSH_INTERVAL`], and a full buffer is
//! written by whoever fills it. So a request pays for a copy, not for a system call or a thread
//! wake-up per line. A channel to a writer thread (tracing-appender, tried first) took the write
//! off the request but cost 12 % of the server's CPU in wake-ups and spinning under `wrk` (perf).
//!
//! The price is that a line may reach the terminal up to [`FLUSH_INTERVAL`] late, and that the
//! last lines are lost if the process is killed outright; a normal stop (Ctrl-C) writes them.
//! The Lambda functions log synchronously instead (`telemetry::init`): a sandbox may be frozen as
//! soon as it answers.

use std::io::{self, BufWriter, Stdout, Write};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tracing_subscriber::fmt::MakeWriter;

pub const FLUSH_INTERVAL: Duration = Duration::from_millis(200);
const BUFFER_BYTES: usize = 64 * 1024;

type Shared = Arc<Mutex<BufWriter<Stdout>>>;

/// The writer handed to the subscriber.
pub struct BufferedStdout(Shared);

/// Writes what is still buffered when dropped: hold it until `main` returns. Also prints the
/// local server's first screen after the log lines ([`FlushOnDrop::print_after_logs`]).
pub struct FlushOnDrop(Shared);

/// Starts the flushing thread.
pub fn buffered_stdout() -> (BufferedStdout, FlushOnDrop) {
    let shared: Shared = Arc::new(Mutex::new(BufWriter::with_capacity(
        BUFFER_BYTES,
        io::stdout(),
    )));
    let flushed = shared.clone();
    std::thread::Builder::new()
        .name("log-flush".into())
        .spawn(move || loop {
            std::thread::sleep(FLUSH_INTERVAL);
            let _ = lock(&flushed).flush();
        })
        .expect("spawn the log flushing thread");
    (BufferedStdout(shared.clone()), FlushOnDrop(shared))
}

impl FlushOnDrop {
    /// Writes `text` to stdout after every line logged so far, then flushes: under the log's
    /// lock, so the lines still buffered come out before it and none lands inside it. A
    /// `println!` would go straight to stdout, ahead of lines logged before it and still in
    /// the buffer.
    pub fn print_after_logs(&self, text: &str) -> io::Result<()> {
        let mut out = lock(&self.0);
        out.write_all(text.as_bytes())?;
        out.flush()
    }
}

impl Drop for FlushOnDrop {
    fn drop(&mut self) {
        let _ = lock(&self.0).flush();
    }
}

/// A panic while the lock was held leaves at worst a partial line: keep logging.
fn lock(shared: &Shared) -> MutexGuard<'_, BufWriter<Stdout>> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One event's line, written whole under the lock.
pub struct LockedLine<'a>(MutexGuard<'a, BufWriter<Stdout>>);

impl Write for LockedLine<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.write(bytes)
    }

    // The flushing thread and a full buffer write it out; a flush per line would undo the point.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for BufferedStdout {
    type Writer = LockedLine<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        LockedLine(lock(&self.0))
    }
}
