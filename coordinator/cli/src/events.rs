//! `events`: the log of who did what (creates, stops, exclusions, user and
//! token changes), newest first, straight from the database file.

use std::path::PathBuf;

use anyhow::{Context, anyhow};
use clap::Args;
use xq_coordinator::events::{EventFilter, EventKind};
use xq_coordinator::service::events::Events;
use xq_coordinator::store::{Store, utc};
use xq_proto::outln;

/// `events [--user NAME] [--run ID] [--kind KIND]`.
#[derive(Debug, Args)]
pub struct EventsArgs {
    /// SQLite database of the coordinator.
    #[arg(long, default_value = "xq.db")]
    db: PathBuf,
    /// Only what this user (or token, `cli`, `system`) did.
    #[arg(long)]
    user: Option<String>,
    /// Only events of this run.
    #[arg(long)]
    run: Option<u64>,
    /// Only this kind: create, approve, reject, modify, stop, resume,
    /// exclude, user, token, engine, asset or worker_release.
    #[arg(long)]
    kind: Option<String>,
    /// At most this many.
    #[arg(long, default_value_t = 100)]
    limit: u32,
}

impl EventsArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let kind = self
            .kind
            .as_deref()
            .map(|k| {
                EventKind::parse(k).ok_or_else(|| {
                    let all: Vec<&str> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
                    anyhow!(
                        "unknown event kind {} (one of {})",
                        xq_proto::quote(k),
                        all.join(", ")
                    )
                })
            })
            .transpose()?;
        let filter = EventFilter {
            actor: self.user,
            run: self.run,
            kind,
            limit: self.limit,
        };
        let store = Store::open(&self.db)
            .with_context(|| format!("cannot open database {}", self.db.display()))?;
        let rt = tokio::runtime::Runtime::new().context("start the async runtime")?;
        let rows = rt.block_on(Events::new(store).list(filter))?;
        for e in rows {
            outln!(
                "{}  {:<16} {:<8} {:<6} {}",
                utc(e.time_ms),
                e.actor,
                e.kind.as_str(),
                e.run.map_or_else(|| "-".to_owned(), |r| format!("run {r}")),
                e.detail
            )?;
        }
        Ok(())
    }
}
