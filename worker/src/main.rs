//! `xq-worker`: local matches (`play`) and the cluster worker (`work`).

use std::process::ExitCode;

use tracing_subscriber::EnvFilter;
use xq_worker::cli::Cli;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse_args().run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if xq_proto::cli::stdout::closed_pipe(e.as_ref()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xq-worker: {e:#}");
            ExitCode::from(2)
        }
    }
}
