//! The approval queue and the changes of a run made from its page:
//! approve, reject (with a reason its author sees), resume, and a new cap,
//! priority or share. Each goes through the core's run services with gRPC's
//! permissions (approvers, never on their own tests; authors resume and
//! change their own).

use std::sync::Arc;

use axum::Form;
use axum::extract::rejection::FormRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{Html, IntoResponse, Redirect};
use minijinja::context;
use serde::Deserialize;

use crate::Web;
use crate::pages::{Page, WebError, page};
use crate::session::{CsrfForm, Visitor, acting, forbidden};
use crate::view::RunRow;
use xq_coordinator::access::UserRole;
use xq_coordinator::runs::RunState;
use xq_coordinator::runs::change::RunChange;

fn csrf_of(form: &Result<Form<CsrfForm>, FormRejection>) -> Option<&str> {
    form.as_ref().ok().map(|Form(f)| f.csrf.as_str())
}

fn shown(id: u64) -> Page {
    Ok(Redirect::to(&format!("/runs/{id}")).into_response())
}

/// `GET /approvals` (approvers and admins): the pending runs, oldest first.
pub async fn queue(State(web): State<Arc<Web>>, visitor: Visitor) -> Page {
    let Some(me) = visitor.user.as_ref() else {
        return Ok(Redirect::to("/sign-in").into_response());
    };
    if me.role < UserRole::Approver {
        return Err(forbidden("the approval queue is for approvers and admins"));
    }
    let mut pending: Vec<RunRow> = web
        .core
        .queries()
        .list_runs()
        .await?
        .iter()
        .filter(|r| r.state == RunState::Pending)
        .map(RunRow::new)
        .collect();
    pending.sort_by_key(|r| r.id);
    let html = page(&web, &visitor, "approvals.html", context! { pending })?;
    Ok(Html(html).into_response())
}

/// `POST /runs/{id}/approve`.
pub async fn approve(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    Path(id): Path<u64>,
    headers: HeaderMap,
    form: Result<Form<CsrfForm>, FormRejection>,
) -> Page {
    let actor = acting(&web, &visitor, &headers, "ApproveRun", csrf_of(&form)).await?;
    web.core.runs().approve(id, actor).await?;
    shown(id)
}

/// The reject form's fields.
#[derive(Debug, Default, Deserialize)]
pub struct RejectForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    reason: String,
}

/// `POST /runs/{id}/reject`.
pub async fn reject(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    Path(id): Path<u64>,
    headers: HeaderMap,
    form: Result<Form<RejectForm>, FormRejection>,
) -> Page {
    let form = form.map_err(|e| WebError::BadRequest(e.body_text()))?.0;
    let actor = acting(&web, &visitor, &headers, "RejectRun", Some(&form.csrf)).await?;
    let reason = form.reason.trim();
    if reason.is_empty() || reason.len() > 500 {
        return Err(WebError::BadRequest(
            "a rejection needs a reason of 1 to 500 bytes".to_owned(),
        ));
    }
    web.core.runs().reject(id, actor, reason.to_owned()).await?;
    shown(id)
}

/// `POST /runs/{id}/resume`.
pub async fn resume(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    Path(id): Path<u64>,
    headers: HeaderMap,
    form: Result<Form<CsrfForm>, FormRejection>,
) -> Page {
    let actor = acting(&web, &visitor, &headers, "ResumeRun", csrf_of(&form)).await?;
    web.core.runs().resume(id, actor).await?;
    shown(id)
}

/// The modify form's fields; an empty one keeps the run's value.
#[derive(Debug, Default, Deserialize)]
pub struct ModifyForm {
    #[serde(default)]
    csrf: String,
    /// The new cap in games (an even number: pairs × 2).
    #[serde(default)]
    games: String,
    #[serde(default)]
    priority: String,
    #[serde(default)]
    share: String,
}

/// A field's number, `None` when empty.
fn field<T: std::str::FromStr>(name: &str, text: &str) -> Result<Option<T>, WebError> {
    match text.trim() {
        "" => Ok(None),
        t => t.parse().map(Some).map_err(|_| {
            WebError::BadRequest(format!("{name} {} is not a number", xq_proto::quote(t)))
        }),
    }
}

/// `POST /runs/{id}/modify`: a new game cap, priority or share.
pub async fn modify(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    Path(id): Path<u64>,
    headers: HeaderMap,
    form: Result<Form<ModifyForm>, FormRejection>,
) -> Page {
    let form = form.map_err(|e| WebError::BadRequest(e.body_text()))?.0;
    let actor = acting(&web, &visitor, &headers, "ModifyRun", Some(&form.csrf)).await?;
    let games: Option<u64> = field("games", &form.games)?;
    if games.is_some_and(|g| g % 2 == 1) {
        return Err(WebError::BadRequest(
            "games come in pairs: give an even number".to_owned(),
        ));
    }
    let change = RunChange::new(
        games.map(|g| g / 2),
        field("priority", &form.priority)?,
        field("share", &form.share)?,
    )
    .map_err(|e| WebError::BadRequest(e.to_string()))?;
    web.core.runs().modify(id, change, actor).await?;
    shown(id)
}
