//! The handlers: each reads what it needs on the read connection in one
//! call, builds its [`crate::view`] values and renders a template.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Form;
use axum::extract::rejection::FormRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use minijinja::context;
use serde::{Deserialize, Serialize};
use xq_engine::rules::Reason;

use crate::Web;
use crate::session::{CsrfForm, Visitor, acting};
use crate::view::{self, Histories, LiveView, RunRow, SpecView};
use xq_coordinator::runs::{RunKind, RunState, RunStatus, health};
use xq_coordinator::service::now_ms;
use xq_coordinator::service::queries::{RunWorkers, WorkerPlay, WorkerVersionRow, WorkersView};

pub use crate::error::{Page, WebError};

/// A template that does not depend on who looks (the shared live part).
pub(super) fn render(web: &Web, name: &str, ctx: minijinja::Value) -> Result<String, WebError> {
    Ok(web.templates.get_template(name)?.render(ctx)?)
}

/// A whole page for `visitor`: `ctx` and `me` (the signed-in user, if
/// any), `csrf` (the token their forms carry) and `sign_up` (whether
/// anyone may make an account).
pub(super) fn page(
    web: &Web,
    visitor: &Visitor,
    name: &str,
    ctx: minijinja::Value,
) -> Result<String, WebError> {
    let me = visitor.me();
    let csrf = visitor.csrf.clone();
    let sign_up = web.open_sign_up;
    render(web, name, context! { me, csrf, sign_up, ..ctx })
}

/// `?kind=…&state=…&author=…` of the runs list; empty = any.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct Filter {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    state: String,
    /// A user's name: their runs only ("my tests").
    #[serde(default)]
    author: String,
}

#[derive(Debug, Serialize)]
struct Section {
    id: &'static str,
    title: &'static str,
    runs: Vec<RunRow>,
}

/// `GET /`: active runs first, then finished and stopped ones.
pub async fn runs(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    Query(filter): Query<Filter>,
) -> Page {
    let kinds = RunKind::ALL.map(RunKind::as_str);
    let states = RunState::ALL.map(RunState::as_str);
    let refused = |what: &str, value: &str, allowed: &[&str]| {
        WebError::BadRequest(format!(
            "unknown {what} {} (one of {})",
            xq_proto::quote(value),
            allowed.join(", ")
        ))
    };
    let kind = match filter.kind.as_str() {
        "" => None,
        k => Some(RunKind::parse(k).ok_or_else(|| refused("kind", k, &kinds))?),
    };
    let state = match filter.state.as_str() {
        "" => None,
        s => Some(RunState::parse(s).ok_or_else(|| refused("state", s, &states))?),
    };
    let all = web.core.queries().list_runs().await?;
    let rows: Vec<RunRow> = all
        .iter()
        .filter(|r| kind.is_none_or(|k| r.spec.kind.kind() == k))
        .filter(|r| state.is_none_or(|s| r.state == s))
        .filter(|r| filter.author.is_empty() || r.author.as_deref() == Some(&filter.author))
        .map(RunRow::new)
        .collect();
    let (pending, rows): (Vec<_>, Vec<_>) =
        rows.into_iter().partition(|r| r.state == RunState::Pending);
    let (active, ended): (Vec<_>, Vec<_>) =
        rows.into_iter().partition(|r| r.state == RunState::Active);
    let mut sections = vec![
        Section {
            id: "active",
            title: "Active",
            runs: active,
        },
        Section {
            id: "ended",
            title: "Finished and stopped",
            runs: ended,
        },
    ];
    if !pending.is_empty() {
        sections.insert(
            0,
            Section {
                id: "pending",
                title: "Waiting for approval",
                runs: pending,
            },
        );
    }
    let html = page(
        &web,
        &visitor,
        "runs.html",
        context! { sections, filter, kinds, states },
    )?;
    Ok(Html(html).into_response())
}

/// A run and the histories its graphs draw, in one read.
async fn load_run(web: &Web, id: u64) -> Result<(RunStatus, Histories), WebError> {
    Ok(web.core.queries().with_histories(id).await?)
}

/// How long a rendered live part is served to every poller even if its run
/// changed meanwhile: a run counting results every millisecond is rendered
/// at most once per this interval, however many browsers poll it.
pub const LIVE_MAX_AGE: Duration = Duration::from_secs(1);

/// A rendered live part: the ETag it was rendered for, when, and the HTML.
type Rendered = (String, Instant, Arc<String>);

/// Rendered live parts by run.
#[derive(Debug, Default)]
pub struct LiveCache(Mutex<HashMap<u64, Rendered>>);

impl LiveCache {
    /// The rendered part of run `id` if it is for `etag` or younger than
    /// [`LIVE_MAX_AGE`]: `(its etag, html)`.
    fn get(&self, id: u64, etag: &str) -> Option<(String, Arc<String>)> {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.get(&id)
            .filter(|(e, at, _)| e == etag || at.elapsed() < LIVE_MAX_AGE)
            .map(|(e, _, h)| (e.clone(), Arc::clone(h)))
    }

    fn put(&self, id: u64, etag: String, html: Arc<String>) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.insert(id, (etag, Instant::now(), html));
    }
}

/// Renders the live part of run `id` and caches it: `(its etag, html)`.
async fn render_live(web: &Web, id: u64) -> Result<(String, Arc<String>), WebError> {
    let (status, h) = load_run(web, id).await?;
    let live = LiveView::new(&status, &h)?;
    let html = Arc::new(render(web, "live.html", context! { live })?);
    web.live.put(id, live.etag.clone(), Arc::clone(&html));
    Ok((live.etag, html))
}

/// `GET /runs/{id}`.
pub async fn run(State(web): State<Arc<Web>>, visitor: Visitor, Path(id): Path<u64>) -> Page {
    let (status, h) = load_run(&web, id).await?;
    let live = LiveView::new(&status, &h)?;
    let live_html = render(&web, "live.html", context! { live })?;
    let spec = SpecView::new(&status);
    let row = live.row.clone();
    let RunWorkers {
        health,
        build_failures: failed,
        serving,
    } = web.core.queries().run_workers(status.clone()).await?;
    let workers: Vec<HealthRow> = health
        .into_iter()
        .map(|h| {
            let play = serving.workers.get(&h.sums.worker_id).cloned();
            HealthRow::new(h, play)
        })
        .collect();
    let serving = (serving.able, serving.active);
    let sources = crate::sources::sources(&status);
    let build_failures: Vec<crate::sources::FailureView> =
        failed.into_iter().map(Into::into).collect();
    let html = page(
        &web,
        &visitor,
        "run.html",
        context! { row, live, live_html, spec, workers, serving, sources, build_failures },
    )?;
    Ok(Html(html).into_response())
}

/// `GET /runs/{id}/live`: the live part, or 304 when `If-None-Match` is
/// its current ETag. `X-Run-State` tells the script when to stop polling.
pub async fn live(State(web): State<Arc<Web>>, Path(id): Path<u64>, headers: HeaderMap) -> Page {
    let status = web.core.queries().get_run(id).await?;
    let (etag, html) = match web.live.get(id, &view::etag(&status)) {
        Some(cached) => cached,
        None => render_live(&web, id).await?,
    };
    let state = HeaderValue::from_static(status.state.as_str());
    let tag = HeaderValue::from_str(&etag).map_err(|e| WebError::Render(e.to_string()))?;
    if headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|v| v.as_bytes() == etag.as_bytes())
    {
        return Ok((
            StatusCode::NOT_MODIFIED,
            [
                (header::ETAG, tag),
                (header::HeaderName::from_static("x-run-state"), state),
            ],
        )
            .into_response());
    }
    Ok((
        [
            (header::ETAG, tag),
            (header::HeaderName::from_static("x-run-state"), state),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        Html(html.as_str().to_owned()),
    )
        .into_response())
}

/// The CSRF field of a form that has nothing else.
fn csrf_of(form: &Result<Form<CsrfForm>, FormRejection>) -> Option<&str> {
    form.as_ref().ok().map(|Form(f)| f.csrf.as_str())
}

/// `POST /runs/{id}/stop`: stops an active or pending run (its author, an
/// approver or an admin), then shows it.
pub async fn stop(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    Path(id): Path<u64>,
    headers: HeaderMap,
    form: Result<Form<CsrfForm>, FormRejection>,
) -> Page {
    let actor = acting(&web, &visitor, &headers, "StopRun", csrf_of(&form)).await?;
    let status = web.core.runs().stop(id, actor).await?;
    debug_assert!(status.state != RunState::Active);
    Ok(Redirect::to(&format!("/runs/{id}")).into_response())
}

/// `POST /runs/{id}/clone`: a new run with run `id`'s spec, by the caller.
pub async fn clone_run(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    Path(id): Path<u64>,
    headers: HeaderMap,
    form: Result<Form<CsrfForm>, FormRejection>,
) -> Page {
    let actor = acting(&web, &visitor, &headers, "CreateRun", csrf_of(&form)).await?;
    let status = web.core.queries().get_run(id).await?;
    let (new_id, _) = web.core.runs().create(status.spec, false, actor).await?;
    Ok(Redirect::to(&format!("/runs/{new_id}")).into_response())
}

/// One worker's results and health in one run, as the run page shows it.
#[derive(Debug, Serialize)]
struct HealthRow {
    id: u64,
    name: String,
    pairs: u64,
    pentanomial: [u64; 5],
    /// Residual z against the run's other workers, two decimals.
    residual: Option<String>,
    time_losses: u64,
    crashes: u64,
    flag: Option<String>,
    excluded: bool,
    /// The CPUs it may use, its memory for engines ("—" unknown), and the
    /// games it plays at once in the run.
    cores: Option<u32>,
    memory: Option<String>,
    games_at_once: Option<u32>,
    /// Its speed with the run's base engine, knps, and its time factor.
    knps: Option<u64>,
    factor: Option<String>,
    /// The engine builds it played ([`health::WorkerSums::builds`]).
    builds: Vec<String>,
}

impl HealthRow {
    fn new(h: health::WorkerHealth, play: Option<WorkerPlay>) -> HealthRow {
        let speed = play.as_ref().and_then(|p| p.speed.as_ref());
        HealthRow {
            cores: play.as_ref().map(|p| p.capacity.cores),
            memory: play
                .as_ref()
                .and_then(|p| p.capacity.memory_mib)
                .map(|m| format!("{:.1} GiB", m as f64 / 1024.0)),
            games_at_once: play.as_ref().map(|p| p.games_at_once),
            knps: speed.map(|s| s.nps / 1000),
            factor: speed.map(|s| format!("{:.2}", s.factor)),
            id: h.sums.worker_id,
            name: h.sums.name,
            pairs: h.sums.pairs,
            pentanomial: h.sums.pentanomial.0,
            residual: h.residual.map(|z| format!("{z:.2}")),
            time_losses: h.sums.time_losses,
            crashes: h.sums.crashes,
            flag: h.standing.flag().map(str::to_owned),
            excluded: h.standing.excluded(),
            builds: h.sums.builds,
        }
    }
}

/// A worker's latest speed with one engine.
#[derive(Debug, Serialize)]
struct SpeedRow {
    engine: String,
    knps: u64,
    /// The time factor of the run it was measured for, two decimals.
    factor: String,
    method: &'static str,
}

#[derive(Debug, Serialize)]
struct WorkerRow {
    /// Games it plays at once of its current lease's run.
    games_at_once: Option<u32>,
    speeds: Vec<SpeedRow>,
    id: u64,
    name: String,
    threads: u32,
    version: String,
    signature: u64,
    last_seen: String,
    ago: String,
    games: u64,
    leases_done: u64,
    leases_expired: u64,
    current: Option<(u64, u64, u32)>,
    /// Stored games this worker ended by a time forfeit, a crash (an engine
    /// that died or did not start: a resignation) and an illegal move.
    time_losses: u64,
    crashes: u64,
    illegal_moves: u64,
    /// Bench nodes per second at the worker's start.
    nps: Option<u64>,
    /// Its flags in active runs and its exclusions from any run.
    flags: Vec<health::RunFlag>,
    /// Whose token registered it.
    owner: Option<String>,
    /// Its machine; `None`: it reported none.
    machine: Option<view::MachineView>,
    /// The build tools it reported, comma-separated; empty: it builds nothing.
    tools: String,
    /// Its target triple and where its version stands (`up to date`, `too
    /// old (requires 0.2.0)`, …), with the state's name for scripts.
    target: String,
    update: String,
    update_state: &'static str,
}

fn ago(ms: i64) -> String {
    let s = (ms / 1000).max(0);
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min", s / 60),
        3600..86_400 => format!("{} h", s / 3600),
        _ => format!("{} d", s / 86_400),
    }
}

/// `GET /workers`.
pub async fn workers(State(web): State<Arc<Web>>, visitor: Visitor) -> Page {
    let now = now_ms();
    let WorkersView {
        workers: found,
        failures,
        mut flags,
        mut measured,
        mut at_once,
        versions,
    } = web.core.queries().workers(now).await?;
    let mut versions: HashMap<u64, _> = versions.into_iter().map(|v| (v.id, v)).collect();
    let failed = |id: u64, reason: Reason| {
        failures
            .iter()
            .find(|(w, r, _)| *w == id && *r == reason)
            .map_or(0, |f| f.2)
    };
    let workers: Vec<WorkerRow> = found
        .into_iter()
        .map(|w| {
            let v = versioned(versions.remove(&w.id));
            WorkerRow {
                target: v.target,
                update: v.update,
                update_state: v.update_state,
                time_losses: failed(w.id, Reason::TimeForfeit),
                crashes: failed(w.id, Reason::Resignation),
                illegal_moves: failed(w.id, Reason::IllegalMove),
                nps: w.bench_nps,
                flags: flags.remove(&w.id).unwrap_or_default(),
                last_seen: view::utc(w.last_seen_ms),
                ago: ago(now - w.last_seen_ms),
                id: w.id,
                name: w.name,
                threads: w.threads,
                version: w.version,
                signature: w.signature,
                games: w.games,
                leases_done: w.leases_done,
                leases_expired: w.leases_expired,
                current: w.current,
                owner: w.owner,
                machine: w.machine.as_ref().map(view::MachineView::from),
                tools: w.tools.into_iter().collect::<Vec<_>>().join(", "),
                games_at_once: at_once.remove(&w.id),
                speeds: measured
                    .remove(&w.id)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(engine, s)| SpeedRow {
                        engine,
                        knps: s.nps / 1000,
                        factor: format!("{:.2}", s.factor),
                        method: s.method.name(),
                    })
                    .collect(),
            }
        })
        .collect();
    Ok(Html(page(&web, &visitor, "workers.html", context! { workers })?).into_response())
}

/// The version fields of a worker's row.
fn versioned(v: Option<WorkerVersionRow>) -> VersionFields {
    match v {
        Some(v) => VersionFields {
            target: v.target,
            update: v.update.text(),
            update_state: v.update.name(),
        },
        None => VersionFields::default(),
    }
}

#[derive(Debug, Default)]
struct VersionFields {
    target: String,
    update: String,
    update_state: &'static str,
}

#[derive(Debug, Serialize)]
struct EngineRow {
    name: String,
    /// Its executables: the untagged one first, then the builds best first.
    builds: Vec<BuildRow>,
    /// The bench signature, or "none (SHA-256 only)".
    signature: String,
    protocol: String,
    options: String,
    /// The user who registered it.
    owner: String,
    registered: String,
}

/// One executable of an engine.
#[derive(Debug, Serialize)]
struct BuildRow {
    /// The ARCH value it needs; `None`: untagged, for any worker.
    arch: Option<&'static str>,
    sha256: String,
    size: u64,
}

/// `GET /engines`.
pub async fn engines(State(web): State<Arc<Web>>, visitor: Visitor) -> Page {
    show_engines(&web, &visitor, StatusCode::OK, None).await
}

/// The engines page with `status`, and why an upload was refused if one was.
pub(crate) async fn show_engines(
    web: &Web,
    visitor: &Visitor,
    status: StatusCode,
    error: Option<String>,
) -> Page {
    let found = web.read_registry().engines().await?;
    let engines: Vec<EngineRow> = found
        .into_iter()
        .map(|entry| {
            let e = entry.engine;
            EngineRow {
                protocol: format!("{:?}", e.protocol).to_lowercase(),
                options: e
                    .options
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                signature: e.signature_text(),
                builds: e
                    .has_untagged()
                    .then(|| BuildRow {
                        arch: None,
                        sha256: e.sha256.clone(),
                        size: e.size,
                    })
                    .into_iter()
                    .chain(e.binaries.iter().map(|b| BuildRow {
                        arch: Some(b.arch.name()),
                        sha256: b.sha256.clone(),
                        size: b.size,
                    }))
                    .collect(),
                name: e.name,
                owner: entry.owner.unwrap_or_default(),
                registered: view::utc(entry.created_ms),
            }
        })
        .collect();
    let html = page(web, visitor, "engines.html", context! { engines, error })?;
    Ok((status, Html(html)).into_response())
}

/// `GET /metrics`: the Prometheus text format.
pub async fn metrics(State(web): State<Arc<Web>>) -> Page {
    let counts = web.core.queries().counts(now_ms()).await?;
    Ok((
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        web.metrics.encode(counts),
    )
        .into_response())
}

/// A file compiled into the binary, served as `content_type`.
fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

const JS: &str = "text/javascript; charset=utf-8";

pub async fn script() -> Response {
    asset(JS, include_str!("templates/live.js"))
}

pub async fn board_script() -> Response {
    asset(JS, include_str!("templates/board.js"))
}

pub async fn new_run_script() -> Response {
    asset(JS, include_str!("templates/new_run.js"))
}

pub async fn style() -> Response {
    asset(
        "text/css; charset=utf-8",
        include_str!("templates/style.css"),
    )
}

pub async fn not_found() -> WebError {
    WebError::NotFound("no such page".to_owned())
}
