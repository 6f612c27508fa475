//! Printing that never panics (issue 33: `fsmeta keys > /dev/full` exited
//! 101). `println!` panics when stdout cannot be written; these writers
//! record the failure instead. A closed pipe (`fsmeta keys | head`) ends
//! the output quietly, as Unix tools do, and the work goes on; any other
//! failure to write stdout (a full disk) also stops the output, and the
//! exit code becomes 2. Nothing is reported when stderr itself cannot be
//! written: there is nowhere to say it.

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

/// Stdout so far: written fine, closed by its reader, or failed.
static STDOUT: AtomicU8 = AtomicU8::new(OK);
const OK: u8 = 0;
const CLOSED: u8 = 1;
const FAILED: u8 = 2;

/// Writes `args` to stdout (and flushes it), unless stdout has already
/// failed or been closed.
pub(crate) fn out(args: fmt::Arguments<'_>) {
    if STDOUT.load(Ordering::Relaxed) != OK {
        return;
    }
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_fmt(args).and_then(|()| o.flush()) {
        let state = if e.kind() == std::io::ErrorKind::BrokenPipe {
            CLOSED
        } else {
            FAILED
        };
        STDOUT.store(state, Ordering::Relaxed);
    }
}

/// Writes `args` to stderr, ignoring a failure.
pub(crate) fn err(args: fmt::Arguments<'_>) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_fmt(args).and_then(|()| e.flush());
}

/// Whether writing stdout failed for a reason other than a closed pipe.
pub(crate) fn stdout_failed() -> bool {
    STDOUT.load(Ordering::Relaxed) == FAILED
}
