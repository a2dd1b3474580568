//! `xq-worker work`: connects to a coordinator and plays the game pairs it leases.

use std::sync::Arc;

use anyhow::Context;
use clap::Args;

use xq_proto::Flags;

use crate::build::BuildConfig;
use crate::client::{self, ClientConfig};
use crate::runner::EnginePlayer;

/// Arguments of `xq-worker work`.
#[derive(Debug, Args)]
pub struct WorkArgs {
    /// Coordinator address, e.g. http://127.0.0.1:50051 (https://… with TLS).
    #[arg(long)]
    coordinator: String,
    /// Worker (or admin) token from `xq-coordinator token add`, sent as
    /// `authorization: Bearer <TOKEN>`.
    #[arg(long, env = "XQ_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// PEM file of the CA that signed the coordinator's TLS certificate
    /// (a self-signed certificate is its own CA); turns TLS on.
    #[arg(long)]
    ca: Option<std::path::PathBuf>,
    /// Games played in parallel.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: u32,
    /// Name shown in the coordinator's logs; defaults to the host name.
    #[arg(long)]
    name: Option<String>,
    /// Where results the coordinator refuses are kept, with its message
    /// (default: `$XDG_STATE_HOME/xq-worker/rejected`, else
    /// `~/.local/state/xq-worker/rejected`).
    #[arg(long)]
    rejected_dir: Option<std::path::PathBuf>,
    /// The instruction-set flags to report instead of the detected ones,
    /// comma-separated (e.g. `popcnt,sse41,ssse3,avx2,bmi2`; the names are
    /// sse3, ssse3, sse41, sse42, popcnt, avx, avx2, bmi1, bmi2, fma, avx512,
    /// vnni, avxvnni, avx512icl, neon, dotprod). They choose the engine
    /// builds this worker plays and the runs it may take: for a machine whose
    /// detection is wrong, or for tests.
    #[arg(long, env = "XQ_CPU_FLAGS", value_name = "FLAGS")]
    cpu_flags: Option<Flags>,
    /// Build no engine from source: report no build tools, so the
    /// coordinator hands this worker no lease of a run with a source engine.
    #[arg(long)]
    no_build: bool,
    /// Time limit of one source engine's build (git's fetch and checkout
    /// included), in seconds; its whole process group is killed after it.
    #[arg(long, value_name = "SECS", default_value_t = crate::build::DEFAULT_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    build_timeout: u64,
    /// The build cache: one bare repository per URL, build directories, the
    /// record of each build and its log (default: `$XDG_CACHE_HOME/xq-builds`,
    /// else `~/.cache/xq-builds`).
    #[arg(long, value_name = "DIR")]
    build_dir: Option<std::path::PathBuf>,
    /// When the coordinator refuses this worker as too old, download its
    /// worker release for this target, replace this executable with it
    /// (the directory must be writable) and restart with the same
    /// arguments. A failed update is logged and reported, the worker stays
    /// (without work) and tries again later. Without it, too old ends the
    /// worker with the coordinator's message.
    #[arg(long)]
    auto_update: bool,
    /// The version this process replaced itself from (set by
    /// `--auto-update` when it restarts the worker).
    #[arg(long, env = crate::update::UPDATED_FROM_ENV, hide = true)]
    updated_from: Option<String>,
}

impl WorkArgs {
    /// Registers and plays leases until Ctrl-C, then hands back the lease in hand.
    pub fn run(self) -> anyhow::Result<()> {
        let player = Arc::new(EnginePlayer::new(self.threads as usize)?);
        let name = self.name.unwrap_or_else(|| {
            std::env::var("HOSTNAME").unwrap_or_else(|_| "xq-worker".to_owned())
        });
        let mut config = ClientConfig::new(self.coordinator, name, self.threads);
        config.token = self.token;
        if let (Some(machine), Some(flags)) = (&mut config.machine, self.cpu_flags) {
            tracing::info!(detected = %machine.flags, reported = %flags, "CPU flags overridden");
            machine.flags = flags;
        }
        if let Some(dir) = self.rejected_dir {
            config.rejected_dir = dir;
        }
        if self.no_build {
            config.build = BuildConfig::none();
        }
        config.auto_update = self.auto_update;
        config.updated_from = self.updated_from;
        config.build.timeout = std::time::Duration::from_secs(self.build_timeout);
        if let Some(dir) = self.build_dir {
            config.build.dir = dir;
        }
        if let Some(ca) = &self.ca {
            config.ca_pem =
                Some(std::fs::read(ca).with_context(|| format!("cannot read {}", ca.display()))?);
        }
        let runtime = tokio::runtime::Runtime::new().context("start the async runtime")?;
        let summary = runtime.block_on(client::run(config, player, async {
            let _ = tokio::signal::ctrl_c().await;
        }))?;
        tracing::info!(
            leases = summary.leases_accepted,
            pairs = summary.pairs_accepted,
            "stopped"
        );
        Ok(())
    }
}
