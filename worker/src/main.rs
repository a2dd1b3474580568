//! `xq-worker`: local matches and the cluster worker.

use std::process::ExitCode;

use clap::Parser;
use xq_worker::cli::Cli;

fn main() -> ExitCode {
    match Cli::parse().run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xq-worker: {e:#}");
            ExitCode::from(2)
        }
    }
}
