//! Printing that never panics (issue 33: `fsmeta keys > /dev/full` exited
//! 101). `println!` panics when stdout cannot be written; these writers
//! record the failure instead. A closed pipe (`fsmeta keys | head`) ends
//! the output quietly, as Unix tools do, and the work goes on; any other
//! failure to write stdout (a full disk) also stops the output, and the
//! exit code becomes 2. Nothing is reported when stderr itself cannot be
//! written: there is nowhere to say it.
//!
//! Both escape control characters other than line feeds and tabs
//! ([`fsmeta::text::escape_controls`]): a name or value quoted from a
//! scenario file (a metric named with ESC sequences) never reaches the
//! terminal raw. Messages on stderr also have huge words cut
//! ([`fsmeta::text::shorten_words`]): a 3 MB bad name is quoted by its
//! first 100 characters and its length. Only [`err_styled`] writes as it is given, for the rich
//! diagnostics whose colours are ANSI sequences (their renderer shows
//! control characters of the quoted text as symbols).

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

/// Stdout so far: written fine, closed by its reader, or failed.
static STDOUT: AtomicU8 = AtomicU8::new(OK);
const OK: u8 = 0;
const CLOSED: u8 = 1;
const FAILED: u8 = 2;

/// Writes `args` to stdout (and flushes it), control characters escaped,
/// unless stdout has already failed or been closed.
pub(crate) fn out(args: fmt::Arguments<'_>) {
    if STDOUT.load(Ordering::Relaxed) != OK {
        return;
    }
    let text = args.to_string();
    let mut o = std::io::stdout().lock();
    if let Err(e) = o
        .write_all(fsmeta::text::escape_controls(&text).as_bytes())
        .and_then(|()| o.flush())
    {
        let state = if e.kind() == std::io::ErrorKind::BrokenPipe {
            CLOSED
        } else {
            FAILED
        };
        STDOUT.store(state, Ordering::Relaxed);
    }
}

/// Writes `args` to stderr, control characters escaped, ignoring a
/// failure.
pub(crate) fn err(args: fmt::Arguments<'_>) {
    let text = args.to_string();
    err_styled(&fsmeta::text::shorten_words(&fsmeta::text::escape_controls(&text)));
}

/// Writes `text` to stderr as it is (ANSI colours kept), ignoring a
/// failure: only for a rendered diagnostic, whose quoted text is already
/// made safe.
pub(crate) fn err_styled(text: &str) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(text.as_bytes()).and_then(|()| e.flush());
}

/// Whether writing stdout failed for a reason other than a closed pipe.
pub(crate) fn stdout_failed() -> bool {
    STDOUT.load(Ordering::Relaxed) == FAILED
}
