//! `backup FILE` and `restore FILE`: online copies of the database and their
//! checked installation (see [`xq_coordinator::store::backup`]).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use xq_coordinator::store::backup::{self, BackupOptions};
use xq_coordinator::store::migrations::MIGRATIONS;
use xq_proto::outln;

/// `backup FILE`.
#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The coordinator's database; a running server keeps serving meanwhile.
    #[arg(long, default_value = "xq.db")]
    db: PathBuf,
    /// Pages (4 KiB) copied per step.
    #[arg(long, default_value_t = BackupOptions::default().pages_per_step)]
    pages_per_step: u32,
    /// Milliseconds between steps.
    #[arg(long, default_value_t = BackupOptions::default().pause.as_millis() as u64)]
    pause_ms: u64,
    /// Where the copy goes; an existing file there is replaced once the copy
    /// is complete and checked.
    file: PathBuf,
}

impl BackupArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let options = BackupOptions {
            pages_per_step: self.pages_per_step.max(1),
            pause: Duration::from_millis(self.pause_ms),
        };
        let r = backup::backup(&self.db, &self.file, options)?;
        outln!(
            "backed up {} to {}: schema version {}, {} runs, {} leases, {} pages in {} steps, {:.2} s (longest step {:.1} ms); integrity ok",
            self.db.display(),
            self.file.display(),
            r.info.version,
            r.info.runs,
            r.info.leases,
            r.info.pages,
            r.steps,
            r.elapsed.as_secs_f64(),
            r.longest_step.as_secs_f64() * 1000.0
        )?;
        Ok(())
    }
}

/// `restore FILE`.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The database to install the backup as. It must not be in use: stop its
    /// coordinator first (a running or paused server is detected and refused).
    #[arg(long, default_value = "xq.db")]
    db: PathBuf,
    /// Overwrite an existing database (its contents are lost).
    #[arg(long)]
    replace: bool,
    /// Only check the backup (integrity, schema version, xq tables); install nothing.
    #[arg(long)]
    check: bool,
    /// A file made by `backup`.
    file: PathBuf,
}

impl RestoreArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let info = if self.check {
            backup::inspect(&self.file)?
        } else {
            backup::restore(&self.file, &self.db, self.replace)?
        };
        let verb = if self.check { "checked" } else { "restored" };
        let into = if self.check {
            String::new()
        } else {
            format!(" as {}", self.db.display())
        };
        outln!(
            "{verb} {}{into}: schema version {}, {} runs, {} leases; integrity ok",
            self.file.display(),
            info.version,
            info.runs,
            info.leases
        )?;
        if info.version < MIGRATIONS.len() {
            outln!(
                "schema version {} is older than this coordinator's {}: the next `serve` upgrades it",
                info.version,
                MIGRATIONS.len()
            )?;
        }
        Ok(())
    }
}
