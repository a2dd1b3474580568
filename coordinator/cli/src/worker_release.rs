//! `xq-coordinator worker-release add|list`: `xq-worker` executables that
//! workers update to, on the database file or at a served coordinator (the
//! rule: [`super::registry::Place::choose`]), through the registry service
//! either way. Uploaded as engines are (hashed first, then
//! streamed a chunk at a time); registering one needs an admin.
//!
//! A release's version and target come from `PATH --version` when the
//! executable runs here; a build for another machine states them
//! (`--version`, `--target`). The version workers must have is the newest
//! release added with `--require`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use xq_coordinator::in_process::Acting;
use xq_coordinator::releases::release_from_wire;
use xq_coordinator::service::registry::Release;
use xq_proto::worker_version::{self, PROGRAM};
use xq_proto::{WorkerVersion, outln, pb};

use super::registry::{Coordinator, PlaceArgs};
use xq_proto::blob::UploadPurpose;

/// How long `PATH --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);

/// `worker-release …`.
#[derive(Debug, Args)]
pub struct WorkerReleaseArgs {
    #[command(subcommand)]
    command: ReleaseCommand,
}

#[derive(Debug, Subcommand)]
enum ReleaseCommand {
    /// Registers the `xq-worker` executable PATH as a worker release (an
    /// admin only): stored by its SHA-256 under its version and target
    /// triple, which `PATH --version` prints (or `--version` and `--target`
    /// state, for a build that does not run here). With `--require`,
    /// workers older than it are refused from now on; `xq-worker work
    /// --auto-update` replaces itself with the release for its target.
    Add {
        /// The executable.
        path: PathBuf,
        /// Its target triple (e.g. aarch64-unknown-linux-gnu); default: the
        /// one `PATH --version` prints.
        #[arg(long)]
        target: Option<String>,
        /// Its version, for a build that does not run here; checked
        /// against `PATH --version` when it runs.
        #[arg(long = "version", value_name = "VERSION")]
        release_version: Option<String>,
        /// Refuse workers older than this release from now on.
        #[arg(long)]
        require: bool,
        #[command(flatten)]
        place: PlaceArgs,
        /// On the database file: the admin it is registered by (default:
        /// `admin`, made if there is none). At a coordinator it is you.
        #[arg(long)]
        user: Option<String>,
    },
    /// Lists the worker releases, newest first, and the required version.
    List {
        #[command(flatten)]
        place: PlaceArgs,
    },
}

impl WorkerReleaseArgs {
    pub fn run(self) -> anyhow::Result<()> {
        match self.command {
            ReleaseCommand::Add {
                path,
                target,
                release_version,
                require,
                place,
                user,
            } => {
                let (version, target) = identify(&path, release_version, target)?;
                let mut coordinator = place.place()?.connect(Acting::For(user))?;
                add(&mut coordinator, &path, version, target, require)
            }
            ReleaseCommand::List { place } => {
                let coordinator = place.place()?.connect(Acting::Administrator)?;
                let answer = coordinator
                    .block_on(
                        coordinator
                            .registry()
                            .list_worker_releases(pb::ListWorkerReleasesRequest {}),
                    )
                    .with_context(|| format!("cannot list the releases of {}", coordinator.url))?
                    .into_inner();
                let required = answer.required_version;
                outln!(
                    "required version: {}",
                    if required.is_empty() {
                        "none"
                    } else {
                        &required
                    }
                )?;
                for release in answer.releases {
                    outln!("{}", line(&release_from_wire(release)?))?;
                }
                Ok(())
            }
        }
    }
}

/// `worker-release add`: uploads the executable at `path` and registers it
/// as `version` for `target`, `required` or not.
fn add(
    coordinator: &mut Coordinator,
    path: &Path,
    version: WorkerVersion,
    target: String,
    required: bool,
) -> anyhow::Result<()> {
    let (sha256, size) = std::fs::File::open(path)
        .map(std::io::BufReader::new)
        .and_then(xq_proto::blob::sha256_of_reader)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let what = format!("{PROGRAM} {version} for {target}");
    if coordinator.upload(path, &sha256, size, UploadPurpose::WorkerRelease, &what)? {
        eprintln!("{what}: {} had its bytes already", coordinator.url);
    }
    let request = pb::AddWorkerReleaseRequest {
        release: Some(pb::WorkerRelease {
            version: version.to_string(),
            target,
            sha256,
            size,
            required,
            created_unix_ms: 0,
        }),
    };
    let answer = coordinator
        .block_on(coordinator.registry().add_worker_release(request))
        .with_context(|| format!("cannot register {what} in {}", coordinator.url))?
        .into_inner();
    let release = answer
        .release
        .context("the coordinator answered without the release")?;
    outln!(
        "{}{}",
        line(&release_from_wire(release)?),
        if answer.existed {
            " (registered already)"
        } else {
            ""
        }
    )?;
    Ok(())
}

/// One release as `add` and `list` print it.
fn line(r: &Release) -> String {
    format!(
        "{PROGRAM} {} target {} sha256 {} size {}{}",
        r.version,
        r.target,
        r.sha256,
        r.size,
        if r.required { " required" } else { "" }
    )
}

/// The version and target of the executable at `path`: what `PATH
/// --version` prints, checked against what is `stated`; for one that does
/// not run here, what is stated, which must then be both.
fn identify(
    path: &Path,
    version: Option<String>,
    target: Option<String>,
) -> anyhow::Result<(WorkerVersion, String)> {
    let version = version
        .map(|v| WorkerVersion::parse_field("--version", &v))
        .transpose()?;
    if let Some(t) = &target {
        worker_version::check_target("--target", t)?;
    }
    let printed = match run_version(path) {
        Ok(text) => text,
        Err(why) => {
            let (Some(version), Some(target)) = (version, target) else {
                bail!(
                    "{} does not run here ({why}); give its --version and --target",
                    path.display()
                );
            };
            return Ok((version, target));
        }
    };
    let Some(found) = worker_version::from_version_output(&printed) else {
        bail!(
            "{} --version printed {}, not `{PROGRAM} VERSION`: is it an xq-worker?",
            path.display(),
            xq_proto::quote(printed.lines().next().unwrap_or(""))
        );
    };
    if let Some(stated) = &version
        && *stated != found
    {
        bail!(
            "{} is {PROGRAM} {found}, not the stated --version {stated}",
            path.display()
        );
    }
    let target = match target {
        Some(t) => t,
        None => worker_version::target_from_version_output(&printed)
            .map(str::to_owned)
            .with_context(|| {
                format!(
                    "{} --version names no target; give --target",
                    path.display()
                )
            })?,
    };
    Ok((found, target))
}

/// What `path --version` prints, or why it does not run.
fn run_version(path: &Path) -> Result<String, String> {
    let mut child = std::process::Command::new(path)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let end = std::time::Instant::now() + VERSION_TIMEOUT;
    loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(_) => break,
            None if std::time::Instant::now() > end => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no answer in {} s", VERSION_TIMEOUT.as_secs()));
            }
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(format!("--version ended with {}", output.status));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
