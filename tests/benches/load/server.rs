//! The coordinator under load, in a child process of its own: the bench
//! re-executes itself with [`SERVE_ARG`], so the clients and the server
//! share the machine's cores but not an address space or a runtime.
//!
//! The child serves the database the parent prepared as `xq-coordinator
//! serve` would (its runtime; leases of [`lease_ttl`], 60 s by default, with
//! heartbeats every sixth of it) with rate limits off, on 127.0.0.1:0; it prints
//! `grpc URL`, `web URL` (with the web view) and `ready` on stdout, and
//! stops gracefully when its stdin closes.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

use anyhow::{Context, bail};
use tokio::net::TcpListener;
use xq_coordinator::auth::RateLimits;
use xq_coordinator::http::Http;
use xq_coordinator::pace::PaceConfig;
use xq_coordinator::server::{self, ServerConfig};
use xq_coordinator::service::{Durability, SchedulerConfig, Store, StoreOptions};
use xq_web::WebView;

/// The hidden argument that makes the bench the server: `SERVE_ARG DB SYNC
/// FILES` (`SYNC`: `full` or `normal`; `FILES`: the open files it needs).
pub const SERVE_ARG: &str = "--xq-load-serve";

/// The child's side: serves until stdin closes.
pub fn serve(args: &[String]) -> anyhow::Result<()> {
    let [db, sync, files] = args else {
        bail!(
            "{SERVE_ARG} takes DB SYNC FILES, got {} arguments",
            args.len()
        );
    };
    let files = files
        .parse()
        .with_context(|| format!("open files {files:?} is not a count"))?;
    crate::procfs::raise_open_file_limit(files)?;
    let durability = match sync.as_str() {
        "full" => Durability::Full,
        "normal" => Durability::Normal,
        other => bail!("sync {other:?} is neither full nor normal"),
    };
    let store = Store::open_with(
        db,
        StoreOptions {
            durability,
            ..StoreOptions::default()
        },
    )
    .with_context(|| format!("cannot open database {db}"))?;
    let config = ServerConfig {
        scheduler: SchedulerConfig {
            pace: PaceConfig {
                target: std::time::Duration::from_secs_f64(60.0 * lease_minutes()?),
                ..PaceConfig::default()
            },
            ..SchedulerConfig::default()
        }
        .with_lease_ttl(lease_ttl()?),
        limits: RateLimits::UNLIMITED,
        ..ServerConfig::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        let _ = stop.send(());
    });
    tokio::runtime::Runtime::new()?.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "grpc http://{}", listener.local_addr()?)?;
        let web = TcpListener::bind("127.0.0.1:0").await?;
        writeln!(out, "web http://{}", web.local_addr()?)?;
        let http = Some(Http::new(web, WebView));
        writeln!(out, "ready")?;
        out.flush()?;
        drop(out);
        server::run_with_web(listener, http, store, config, async {
            let _ = stopped.await;
        })
        .await?;
        Ok(())
    })
}

/// The parent's handle on the serving child.
#[derive(Debug)]
pub struct Served {
    child: Child,
    stdin: Option<ChildStdin>,
    pub pid: u32,
    pub grpc_url: String,
    pub web_url: String,
}

impl Served {
    /// Starts the child on `db`, allowed `files` open files, and waits
    /// until it listens.
    pub fn start(db: &Path, durability: Durability, files: u64) -> anyhow::Result<Served> {
        let exe = std::env::current_exe().context("the bench's own path")?;
        let mut child = Command::new(exe)
            .arg(SERVE_ARG)
            .arg(db)
            .arg(match durability {
                Durability::Normal => "normal",
                _ => "full",
            })
            .arg(files.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .context("cannot start the server process")?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().context("the server's stdout")?;
        let (mut grpc_url, mut web_url) = (None, None);
        for line in BufReader::new(stdout).lines() {
            let line = line.context("the server's stdout")?;
            if let Some(url) = line.strip_prefix("grpc ") {
                grpc_url = Some(url.to_owned());
            } else if let Some(url) = line.strip_prefix("web ") {
                web_url = Some(url.to_owned());
            } else if line == "ready" {
                break;
            }
        }
        let pid = child.id();
        let (Some(grpc_url), Some(web_url)) = (grpc_url, web_url) else {
            let status = child.wait()?;
            bail!("the server process ended ({status}) before it listened");
        };
        Ok(Served {
            child,
            stdin,
            pid,
            grpc_url,
            web_url,
        })
    }

    /// Closes the child's stdin and waits until it has stopped.
    pub fn stop(mut self) -> anyhow::Result<()> {
        drop(self.stdin.take());
        let status = self.child.wait().context("waiting for the server")?;
        if !status.success() {
            bail!("the server process ended with {status}");
        }
        Ok(())
    }
}

/// `XQ_LOAD_LEASE_MINUTES`: the time leases are sized to (`serve
/// --lease-minutes`, 30 by default); 0 hands out single batches, as every
/// coordinator before issue 34 did.
fn lease_minutes() -> anyhow::Result<f64> {
    match std::env::var("XQ_LOAD_LEASE_MINUTES") {
        Err(_) => Ok(30.0),
        Ok(v) => v
            .parse::<f64>()
            .ok()
            .filter(|m| m.is_finite() && *m >= 0.0)
            .with_context(|| format!("XQ_LOAD_LEASE_MINUTES: {v:?} is not a number of minutes")),
    }
}

/// `XQ_LOAD_LEASE_TTL_SECS`: the lease time-to-live (`serve --lease-secs`,
/// 60 by default), which also sets how often workers send heartbeats.
pub fn lease_ttl() -> anyhow::Result<std::time::Duration> {
    match std::env::var("XQ_LOAD_LEASE_TTL_SECS") {
        Err(_) => Ok(std::time::Duration::from_secs(60)),
        Ok(v) => v
            .parse::<u64>()
            .ok()
            .map(std::time::Duration::from_secs)
            .with_context(|| format!("XQ_LOAD_LEASE_TTL_SECS: {v:?} is not a number of seconds")),
    }
}
