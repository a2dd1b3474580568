//! `events`: the log of who did what (creates, stops, exclusions, user and
//! token changes), newest first, from the database file or a served
//! coordinator (`--coordinator`), through the administration service
//! either way.

use anyhow::{Context, bail};
use clap::Args;
use xq_coordinator::convert::MAX_EVENTS;
use xq_coordinator::events::EventKind;
use xq_coordinator::in_process::Acting;
use xq_coordinator::service::utc;
use xq_proto::{outln, pb};

use super::registry::FileOrCoordinator;

/// `events [--user NAME] [--run ID] [--kind KIND]`.
#[derive(Debug, Args)]
pub struct EventsArgs {
    #[command(flatten)]
    place: FileOrCoordinator,
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
        if let Some(k) = self.kind.as_deref()
            && EventKind::parse(k).is_none()
        {
            let all: Vec<&str> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
            bail!(
                "unknown event kind {} (one of {})",
                xq_proto::quote(k),
                all.join(", ")
            );
        }
        let request = pb::ListEventsRequest {
            actor: self.user.unwrap_or_default(),
            run_id: self.run.unwrap_or(0),
            kind: self.kind.unwrap_or_default(),
            limit: self.limit.clamp(1, MAX_EVENTS),
        };
        let place = self.place.place();
        let coordinator = place.connect(Acting::Administrator)?;
        let rows = coordinator
            .block_on(coordinator.users().list_events(request))
            .with_context(|| format!("cannot list the events of {}", coordinator.url))?
            .into_inner()
            .events;
        for e in rows {
            outln!(
                "{}  {:<16} {:<8} {:<6} {}",
                utc(e.time_unix_ms),
                e.actor,
                e.kind,
                if e.run_id == 0 {
                    "-".to_owned()
                } else {
                    format!("run {}", e.run_id)
                },
                e.detail
            )?;
        }
        Ok(())
    }
}
