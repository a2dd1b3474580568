//! `xq-worker work`: connects to a coordinator and plays the game pairs it leases.

use std::sync::Arc;

use anyhow::Context;
use clap::Args;

use xq_proto::Flags;
use xq_proto::capacity::Capacity;

use crate::build::BuildConfig;
use crate::client::{self, ClientConfig};
use crate::identity::MachineId;
use crate::runner::EnginePlayer;

/// Arguments of `xq-worker work`.
#[derive(Debug, Args)]
pub struct WorkArgs {
    /// Coordinator address, e.g. http://127.0.0.1:50051 (https://… with TLS).
    #[arg(long)]
    coordinator: String,
    /// Worker token (role worker: `xq-coordinator token add --role worker
    /// NAME`, or the web view's account page), sent as `authorization:
    /// Bearer <TOKEN>`. On the command line every user of the machine sees
    /// it (`ps`): prefer --token-file or the XQ_TOKEN environment variable.
    #[arg(long, env = "XQ_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// A file holding the token (its first line; mode 0600, e.g. written
    /// with `umask 077`); replaces --token and XQ_TOKEN.
    #[arg(long, value_name = "FILE")]
    token_file: Option<std::path::PathBuf>,
    /// PEM file of the CA that signed the coordinator's TLS certificate
    /// (ca.pem from `xq-coordinator cert`; not the coordinator's certificate
    /// itself); needs an https:// coordinator.
    #[arg(long)]
    ca: Option<std::path::PathBuf>,
    /// The most CPUs this worker uses (default: all of them). Each run's
    /// games at once follow from it: one core per search thread of the
    /// engine to move (a run of 2 threads per engine on 4 CPUs plays 2
    /// games at once), and no more than the memory holds.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// The most memory engines may use, MiB (default: the machine's
    /// physical memory); 512 MiB of it is left to the system. A game needs
    /// both players' hash plus 64 MiB per engine.
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..))]
    memory_mib: Option<u64>,
    /// Name shown on the coordinator's workers page and in its logs;
    /// defaults to the machine's host name (what `hostname` prints).
    #[arg(long)]
    name: Option<String>,
    /// The worker's state directory: its machine id (`machine-id`, which
    /// makes the coordinator keep one row for this worker across restarts
    /// and updates; a second worker running on the same directory takes
    /// `machine-id.2`) and the refused results (default:
    /// `$XDG_STATE_HOME/xq-worker`, else `~/.local/state/xq-worker`).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<std::path::PathBuf>,
    /// Where results the coordinator refuses are kept, with its message
    /// (default: `rejected` in the state directory).
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
    /// Time limit of an engine's signature (its bench, or its fixed search),
    /// in seconds: past it the engine is killed and the run stopped with
    /// "bench timed out after N s" as its cause.
    #[arg(long, value_name = "SECS", default_value_t = crate::speed::BENCH_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    bench_timeout: u64,
    /// The build cache: one bare repository per URL, build directories, the
    /// record of each build and its log (default: `$XDG_CACHE_HOME/xq-builds`,
    /// else `~/.cache/xq-builds`).
    #[arg(long, value_name = "DIR")]
    build_dir: Option<std::path::PathBuf>,
    /// Fleet mode, for rented machines: exit (status 0) once the
    /// coordinator has had no work for this worker for --fleet-idle seconds.
    #[arg(long)]
    fleet: bool,
    /// Seconds without work before a fleet worker exits. Five minutes
    /// bridges the gap between one run ending and the next being created or
    /// approved, and costs little on a machine billed by the minute.
    #[arg(long, value_name = "SECS", default_value_t = 300, requires = "fleet",
          value_parser = clap::value_parser!(u64).range(1..))]
    fleet_idle: u64,
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
    /// Registers and plays leases until Ctrl-C (then hands back the lease in
    /// hand) or, in fleet mode, until there has been no work for a while.
    pub fn run(self) -> anyhow::Result<()> {
        let name = self
            .name
            .or_else(crate::identity::host_name)
            .unwrap_or_else(|| "xq-worker".to_owned());
        let state_dir = self.state_dir.unwrap_or_else(crate::identity::state_dir);
        let identity = MachineId::claim(&state_dir).with_context(|| {
            format!(
                "cannot keep this worker's machine id in {}",
                state_dir.display()
            )
        })?;
        tracing::info!(machine_id = %identity.id, file = %identity.path.display(), %name, "identity");
        let mut machine = crate::machine::detect();
        if let Some(flags) = self.cpu_flags {
            tracing::info!(detected = %machine.flags, reported = %flags, "CPU flags overridden");
            machine.flags = flags;
        }
        if let Some(mib) = self.memory_mib {
            machine.memory_mib = match machine.memory_mib {
                0 => mib,
                detected => detected.min(mib),
            };
        }
        let threads = self.threads.map_or(machine.cores, |t| t.min(machine.cores));
        let capacity = Capacity::of(threads, Some(&machine));
        tracing::info!(cores = capacity.cores, memory_mib = ?capacity.memory_mib, "capacity");
        let player = Arc::new(EnginePlayer::with_capacity(
            capacity,
            crate::blob_cache::default_dir(),
        )?);
        let mut config = ClientConfig::new(self.coordinator, name, capacity.cores);
        config.machine = Some(machine);
        config.token = match &self.token_file {
            Some(file) => Some(read_token_file(file)?),
            None => self.token,
        };
        config.machine_id = Some(identity.id.clone());
        config.rejected_dir = self
            .rejected_dir
            .unwrap_or_else(|| state_dir.join("rejected"));
        if self.no_build {
            config.build = BuildConfig::none();
        }
        config.auto_update = self.auto_update;
        config.updated_from = self.updated_from;
        config.build.timeout = std::time::Duration::from_secs(self.build_timeout);
        config.signature_timeout = std::time::Duration::from_secs(self.bench_timeout);
        if let Some(dir) = self.build_dir {
            config.build.dir = dir;
        }
        if let Some(ca) = &self.ca {
            config.ca_pem =
                Some(std::fs::read(ca).with_context(|| format!("cannot read {}", ca.display()))?);
        }
        config.ca_file = self.ca;
        if self.fleet {
            config.fleet_idle = Some(std::time::Duration::from_secs(self.fleet_idle));
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

/// The token in `file`: its first line, trimmed. A file other users may
/// read is used with a warning.
fn read_token_file(file: &std::path::Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read the token file {}", file.display()))?;
    let token = text.lines().next().unwrap_or_default().trim();
    if token.is_empty() {
        anyhow::bail!(
            "the token file {} is empty: put the token from `xq-coordinator token add` on its first line",
            file.display()
        );
    }
    let open = xq_proto::private::open_to_others(file);
    if open != 0 {
        tracing::warn!(
            file = %file.display(),
            mode = format!("{open:03o}"),
            "other users may read the token file: `chmod 600` it"
        );
    }
    Ok(token.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_file_gives_its_first_line_and_an_empty_one_is_refused() {
        let dir = std::env::temp_dir().join(format!("xq-token-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "  xqt_abc \nignored\n").unwrap();
        assert_eq!(read_token_file(&file).unwrap(), "xqt_abc");
        std::fs::write(&file, "\n").unwrap();
        let err = format!("{:#}", read_token_file(&file).unwrap_err());
        assert!(err.contains("is empty"), "{err}");
        let err = format!("{:#}", read_token_file(&dir.join("missing")).unwrap_err());
        assert!(err.contains("cannot read the token file"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
