//! `xq-coordinator`: the coordinator binary. Parsing lives in [`cli`]; the
//! work lives in the library.

use std::process::ExitCode;

use clap::Parser;

mod cli;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xq-coordinator: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    cli::Cli::parse().run()
}
