//! The `fsmeta` binary: parses arguments, calls the library, maps the
//! outcome to an exit code (0 ok, 1 expectation failed, 2 bad input).

#![allow(clippy::result_large_err)]

/// `print!` to stdout without panicking ([`cli::io::out`]).
macro_rules! out {
    ($($t:tt)*) => { $crate::cli::io::out(format_args!($($t)*)) };
}
/// `println!` to stdout without panicking ([`cli::io::out`]).
macro_rules! outln {
    () => { $crate::cli::io::out(format_args!("\n")) };
    ($($t:tt)*) => { $crate::cli::io::out(format_args!("{}\n", format_args!($($t)*))) };
}
/// `eprintln!` without panicking ([`cli::io::err`]).
macro_rules! errln {
    ($($t:tt)*) => { $crate::cli::io::err(format_args!("{}\n", format_args!($($t)*))) };
}

mod bench;
mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let style = cli.error_format.style();
    let code = match cli::execute(cli) {
        Ok(cli::Status::Ok) => ExitCode::SUCCESS,
        Ok(cli::Status::ExpectationFailed) => {
            errln!("fsmeta: an expectation failed");
            ExitCode::from(1)
        }
        Err(err) => {
            match err.diagnostic() {
                Some(d) if style != fsmeta::diagnostic::Style::Plain => cli::io::err_styled(&d.show(style)),
                _ => errln!("fsmeta: error: {:#}", anyhow::Error::from(err)),
            }
            ExitCode::from(2)
        }
    };
    if cli::io::stdout_failed() { ExitCode::from(2) } else { code }
}
