//! `xq-coordinator worker-release add|list`: `xq-worker` executables that
//! workers update to, on the database file or at a served coordinator (the
//! rule: [`Place::choose`]). Uploaded as engines are (hashed first, then
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
use xq_coordinator::events::Actor;
use xq_coordinator::releases::release_from_wire;
use xq_coordinator::store::worker_releases::{self, NewRelease, Release};
use xq_coordinator::store::{Store, now_ms, users};
use xq_proto::blob::{MAX_BLOB_BYTES, MAX_UPLOAD_BYTES};
use xq_proto::worker_version::{self, PROGRAM};
use xq_proto::{WorkerVersion, outln, pb};

use super::registry::{Place, PlaceArgs};

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
                let place = Place::choose(place.db, &place.remote)?;
                if user.is_some() && matches!(place, Place::Remote(_)) {
                    bail!("--user works only on the database file; at a coordinator it is you");
                }
                let (sha256, size) = std::fs::File::open(&path)
                    .map(std::io::BufReader::new)
                    .and_then(xq_proto::blob::sha256_of_reader)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                let most = match place {
                    Place::File(_) => MAX_BLOB_BYTES,
                    Place::Remote(_) => MAX_UPLOAD_BYTES,
                };
                if size > most {
                    bail!(
                        "{} is {size} bytes; the registry takes at most {most}",
                        path.display()
                    );
                }
                let new = NewRelease {
                    version,
                    target,
                    sha256,
                    size,
                    required: require,
                };
                let what = format!("{PROGRAM} {} for {}", new.version, new.target);
                let (release, existed) = match place {
                    Place::File(db) => {
                        let source = std::fs::File::open(&path)
                            .map(std::io::BufReader::new)
                            .with_context(|| format!("cannot read {}", path.display()))?;
                        let store = Store::open(&db)
                            .with_context(|| format!("cannot open {}", db.display()))?;
                        tokio::runtime::Runtime::new()?
                            .block_on(store.call(move |conn| {
                                let tx = conn.savepoint()?;
                                let owner = users::named_or_admin(&tx, user.as_deref(), now_ms())?;
                                let added = worker_releases::add(
                                    &tx,
                                    &new,
                                    source,
                                    owner,
                                    &Actor::cli(),
                                    now_ms(),
                                )?;
                                tx.commit()?;
                                Ok(added)
                            }))
                            .with_context(|| format!("cannot add {what}"))?
                    }
                    Place::Remote(mut coordinator) => {
                        if coordinator.upload(&path, &new.sha256, new.size, &what)? {
                            eprintln!("{what}: {} had its bytes already", coordinator.url);
                        }
                        let url = coordinator.url.clone();
                        let request = pb::AddWorkerReleaseRequest {
                            release: Some(pb::WorkerRelease {
                                version: new.version.to_string(),
                                target: new.target.clone(),
                                sha256: new.sha256.clone(),
                                size: new.size,
                                required: new.required,
                                created_unix_ms: 0,
                            }),
                        };
                        let answer = coordinator
                            .call(|mut c| async move { c.add_worker_release(request).await })
                            .with_context(|| format!("cannot register {what} at {url}"))?;
                        let release = answer
                            .release
                            .context("the coordinator answered without the release")?;
                        (release_from_wire(release)?, answer.existed)
                    }
                };
                outln!(
                    "{}{}",
                    line(&release),
                    if existed { " (registered already)" } else { "" }
                )?;
            }
            ReleaseCommand::List { place } => {
                let (found, required) = match Place::choose(place.db, &place.remote)? {
                    Place::File(db) => {
                        let store = Store::open(&db)
                            .with_context(|| format!("cannot open {}", db.display()))?;
                        tokio::runtime::Runtime::new()?.block_on(store.call(|conn| {
                            Ok((
                                worker_releases::list(conn)?,
                                worker_releases::required(conn)?.map(|v| v.to_string()),
                            ))
                        }))?
                    }
                    Place::Remote(mut coordinator) => {
                        let url = coordinator.url.clone();
                        let answer = coordinator
                            .call(|mut c| async move {
                                c.list_worker_releases(pb::ListWorkerReleasesRequest {})
                                    .await
                            })
                            .with_context(|| format!("cannot list the releases of {url}"))?;
                        let found = answer
                            .releases
                            .into_iter()
                            .map(release_from_wire)
                            .collect::<Result<_, _>>()?;
                        let required = (!answer.required_version.is_empty())
                            .then_some(answer.required_version);
                        (found, required)
                    }
                };
                outln!(
                    "required version: {}",
                    required.as_deref().unwrap_or("none")
                )?;
                for release in found {
                    outln!("{}", line(&release))?;
                }
            }
        }
        Ok(())
    }
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
