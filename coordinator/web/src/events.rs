//! `GET /events`: the log of who did what, newest first, filtered by user,
//! run and kind (`?user=ana&run=3&kind=stop`), open to everyone as the run
//! pages are.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::{Html, IntoResponse};
use minijinja::context;
use serde::{Deserialize, Serialize};
use xq_coordinator::events::{EventFilter, EventKind};

use crate::Web;
use crate::pages::{Page, WebError, page};
use crate::session::Visitor;
use crate::view::utc;

/// The most events one page shows.
const PAGE: u32 = 500;

/// `?user=…&run=…&kind=…`; empty = any.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct EventQuery {
    #[serde(default)]
    user: String,
    #[serde(default)]
    run: String,
    #[serde(default)]
    kind: String,
}

#[derive(Debug, Serialize)]
struct EventRow {
    time: String,
    actor: String,
    kind: &'static str,
    run: Option<u64>,
    detail: String,
}

pub async fn list(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    Query(query): Query<EventQuery>,
) -> Page {
    let kinds: Vec<&str> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
    let kind = match query.kind.as_str() {
        "" => None,
        k => Some(EventKind::parse(k).ok_or_else(|| {
            WebError::BadRequest(format!(
                "unknown event kind {} (one of {})",
                xq_proto::quote(k),
                kinds.join(", ")
            ))
        })?),
    };
    let run = match query.run.trim() {
        "" => None,
        r => Some(r.parse::<u64>().map_err(|_| {
            WebError::BadRequest(format!("run {} is not a run id", xq_proto::quote(r)))
        })?),
    };
    let filter = EventFilter {
        actor: (!query.user.is_empty()).then(|| query.user.clone()),
        run,
        kind,
        limit: PAGE,
    };
    let rows: Vec<EventRow> = web
        .events()
        .list(filter)
        .await?
        .into_iter()
        .map(|e| EventRow {
            time: utc(e.time_ms),
            actor: e.actor,
            kind: e.kind.as_str(),
            run: e.run,
            detail: e.detail,
        })
        .collect();
    let html = page(
        &web,
        &visitor,
        "events.html",
        context! { events => rows, filter => query, kinds },
    )?;
    Ok(Html(html).into_response())
}
