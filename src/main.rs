//! The `fsmeta` binary: parses arguments, calls the library, maps the
//! outcome to an exit code (0 ok, 1 expectation failed, 2 bad input).

#![allow(clippy::result_large_err)]

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
    match cli::execute(cli) {
        Ok(cli::Status::Ok) => ExitCode::SUCCESS,
        Ok(cli::Status::ExpectationFailed) => {
            eprintln!("fsmeta: an expectation failed");
            ExitCode::from(1)
        }
        Err(err) => {
            match err.diagnostic() {
                Some(d) if style != fsmeta::diagnostic::Style::Plain => eprint!("{}", d.show(style)),
                _ => eprintln!("fsmeta: error: {:#}", anyhow::Error::from(err)),
            }
            ExitCode::from(2)
        }
    }
}
