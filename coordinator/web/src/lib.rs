//! The web view: runs, a run's statistics and graphs, workers, engines, and
//! `/metrics`, served by axum next to the gRPC server ([`WebView`], the
//! server's [`HttpView`]). Its own crate, so the coordinator's core does not
//! compile axum's routes, templates, plotters and fonts.
//!
//! # Design
//!
//! * Reads of runs, workers and games are the core's queries
//!   ([`Core::queries`]), on a read-only connection: page rendering never
//!   queues behind the writer thread, and anyone who can reach the address
//!   may read, as on fishtest.
//! * Writes (a new run from the form, stopping, resuming, approving,
//!   rejecting, running a spec again) go through the [`Core`]'s services like the
//!   gRPC calls, with the same permissions, by the signed-in user (forms
//!   with a CSRF token, [`session`]) or by the caller of an
//!   `authorization: Bearer` header, checked by the same [`Authenticator`]
//!   as gRPC. Users and trust are changed on `/users` (admins; approvers
//!   trust developers).
//! * A run's live part (`/runs/{id}/live`) carries an ETag that changes with
//!   every counted result; the page's script polls it every 2 s, an
//!   unchanged run costs a 304, and a changed one is rendered once for all
//!   pollers ([`pages::LiveCache`]).
//! * Templates are minijinja files compiled into the binary
//!   (`web/templates/`); charts are SVG drawn on the server ([`charts`]).
//!
//! # Layout
//!
//! * [`view`]: what the pages show, built from stored runs.
//! * [`sources`]: a run's source engines and failed builds, for its page.
//! * [`run_charts`]: which charts a run has (also `report --plot`'s).
//! * [`charts`]: plotters line and bar charts, SVG or PNG.
//! * [`error`]: why a page could not be served; [`error_page`]: that
//!   answer as a page of the site, for a browser.
//! * [`pages`]: the handlers of runs, workers, engines and metrics.
//! * [`downloads`]: worker releases served to volunteers without Rust.
//! * [`engine_upload`]: an engine uploaded from the engines page.
//! * [`games`]: a run's games list, its PGN download, and a game's page.
//! * [`new_run`]: the form that creates a run (admin), built by the CLI's
//!   own arguments.
//! * [`replay`]: a stored game replayed ply by ply for the board.
//! * [`events`]: the log of who did what.
//! * [`listen`]: plain or TLS connections, and their peers' addresses.
//! * [`session`]: sessions, cookies, CSRF tokens, who makes a change.
//! * [`account`]: sign-in, sign-up, sign-out.
//! * [`approvals`]: the approval queue, approve, reject, resume.
//! * [`users`]: the users page.
//! * [`profile`]: a user's own page: password and tokens.

pub mod account;
pub mod approvals;
pub mod charts;
pub mod datagen_view;
pub mod downloads;
pub mod engine_upload;
pub mod error;
pub mod error_page;
pub mod events;
pub mod games;
pub mod listen;
pub mod new_run;
pub mod pages;
pub mod profile;
pub mod replay;
pub mod run_charts;
pub mod session;
pub mod sources;
pub mod users;
pub mod view;

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use minijinja::Environment;
use tokio::net::TcpListener;

use xq_coordinator::auth::Authenticator;
use xq_coordinator::http::{BoxFuture, HttpView, ViewParts};
use xq_coordinator::metrics::Metrics;
use xq_coordinator::service::Core;
use xq_coordinator::service::Store;
use xq_coordinator::service::accounts::Accounts;
use xq_coordinator::service::events::Events;
use xq_coordinator::service::registry::{Registry, UploadQuota};

/// Everything the handlers share.
#[derive(Debug)]
pub struct Web {
    /// Read-only connection for every page.
    reader: Store,
    /// The writer, for sign-up, sessions and users.
    store: Store,
    /// Runs, workers and games: every read of them and every change to runs.
    core: Core,
    auth: Arc<Authenticator>,
    metrics: Arc<Metrics>,
    templates: Environment<'static>,
    live: pages::LiveCache,
    /// Cookies get `Secure` (the view is reached over HTTPS).
    secure_cookies: bool,
    /// Served over TLS (its own, not a proxy's).
    tls: Option<xq_coordinator::tls::ServerTls>,
    /// Reverse proxies whose `X-Forwarded-For` names the client.
    trusted_proxies: Vec<std::net::IpAddr>,
    /// Whether `/sign-up` makes accounts.
    open_sign_up: bool,
    /// How many bytes of blobs one user's uploads may store.
    upload_quota: UploadQuota,
}

/// The templates, compiled into the binary.
const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("templates/base.html")),
    ("macros.html", include_str!("templates/macros.html")),
    ("runs.html", include_str!("templates/runs.html")),
    ("run.html", include_str!("templates/run.html")),
    ("live.html", include_str!("templates/live.html")),
    ("workers.html", include_str!("templates/workers.html")),
    ("engines.html", include_str!("templates/engines.html")),
    ("games.html", include_str!("templates/games.html")),
    ("game.html", include_str!("templates/game.html")),
    ("new_run.html", include_str!("templates/new_run.html")),
    ("events.html", include_str!("templates/events.html")),
    ("sign_in.html", include_str!("templates/sign_in.html")),
    ("sign_up.html", include_str!("templates/sign_up.html")),
    ("approvals.html", include_str!("templates/approvals.html")),
    ("users.html", include_str!("templates/users.html")),
    ("account.html", include_str!("templates/account.html")),
    ("downloads.html", include_str!("templates/downloads.html")),
    ("error.html", include_str!("templates/error.html")),
];

impl Web {
    /// Users, tokens and sessions: changed on the writer.
    fn accounts(&self) -> Accounts {
        Accounts::new(self.store.clone())
    }

    /// Users, tokens and sessions: read on the read connection.
    fn read_accounts(&self) -> Accounts {
        Accounts::new(self.reader.clone())
    }

    /// Uploads and registrations, on the writer.
    fn registry(&self) -> Registry {
        Registry::new(self.store.clone(), self.upload_quota)
    }

    /// The registry read on the read connection (lists, downloads).
    pub(crate) fn read_registry(&self) -> Registry {
        Registry::new(self.reader.clone(), self.upload_quota)
    }

    /// The events log, read.
    fn events(&self) -> Events {
        Events::new(self.reader.clone())
    }

    /// The view over `parts.reader` (a read connection), stopping and
    /// creating runs through `parts.core`, with tokens checked by
    /// `parts.auth`.
    pub fn new(parts: ViewParts) -> Self {
        let ViewParts {
            reader,
            store,
            core,
            auth,
            metrics,
            secure_cookies,
            tls,
            trusted_proxies,
            open_sign_up,
            upload_quota,
        } = parts;
        let mut templates = Environment::new();
        for (name, source) in TEMPLATES {
            // The templates are part of the binary and covered by tests.
            templates
                .add_template(name, source)
                .unwrap_or_else(|e| panic!("template {name}: {e}"));
        }
        Web {
            reader,
            store,
            core,
            auth,
            metrics,
            templates,
            live: pages::LiveCache::default(),
            secure_cookies,
            tls,
            trusted_proxies,
            open_sign_up,
            upload_quota,
        }
    }
}

/// Every route.
pub fn router(web: Arc<Web>) -> Router {
    Router::new()
        .route("/", get(pages::runs))
        .route("/runs/new", get(new_run::form).post(new_run::create))
        .route("/runs/{id}", get(pages::run))
        .route("/runs/{id}/live", get(pages::live))
        .route("/runs/{id}/stop", post(pages::stop))
        .route("/runs/{id}/resume", post(approvals::resume))
        .route("/runs/{id}/approve", post(approvals::approve))
        .route("/runs/{id}/reject", post(approvals::reject))
        .route("/runs/{id}/modify", post(approvals::modify))
        .route("/approvals", get(approvals::queue))
        .route("/users", get(users::list).post(users::add))
        .route("/users/{name}", post(users::change))
        .route(
            "/sign-in",
            get(account::sign_in_form).post(account::sign_in),
        )
        .route(
            "/sign-up",
            get(account::sign_up_form).post(account::sign_up),
        )
        .route("/sign-out", post(account::sign_out))
        .route("/account", get(profile::account))
        .route("/account/password", post(profile::change_password))
        .route("/account/tokens", post(profile::create_token))
        .route("/account/tokens/revoke", post(profile::revoke_token))
        .route("/runs/{id}/clone", post(pages::clone_run))
        .route("/runs/{id}/games", get(games::list))
        .route("/runs/{id}/games.pgn", get(games::download))
        .route("/runs/{id}/games/{lease}/{index}", get(games::game))
        .route("/workers", get(pages::workers))
        .route("/engines", get(pages::engines))
        .route("/download", get(downloads::list))
        .route("/download/xq-worker.service", get(downloads::unit))
        .route("/download/xq-worker/{target}", get(downloads::worker))
        .route(
            "/engines/upload",
            post(engine_upload::upload).layer(DefaultBodyLimit::max(engine_upload::MAX_BODY_BYTES)),
        )
        .route("/events", get(events::list))
        .route("/metrics", get(pages::metrics))
        .route("/static/live.js", get(pages::script))
        .route("/static/style.css", get(pages::style))
        .route("/static/board.js", get(pages::board_script))
        .route("/static/new_run.js", get(pages::new_run_script))
        .fallback(pages::not_found)
        .layer(middleware::from_fn_with_state(
            Arc::clone(&web),
            error_page::html,
        ))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&web),
            session::csrf_cookie,
        ))
        .layer(middleware::from_fn(session::security_headers))
        .layer(middleware::from_fn_with_state(Arc::clone(&web), count))
        .with_state(web)
}

/// Counts a request by route and status.
async fn count(State(web): State<Arc<Web>>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_owned();
    let method = format!("{} {route}", request.method());
    let start = Instant::now();
    let response = next.run(request).await;
    web.metrics.observe(
        "http",
        &method,
        response.status().as_str(),
        start.elapsed().as_secs_f64(),
    );
    response
}

/// The web view as the server's [`HttpView`]: `run_with_web(listener,
/// Some(Http::new(http, WebView)), …)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebView;

impl HttpView for WebView {
    fn serve(
        self: Box<Self>,
        listener: TcpListener,
        parts: ViewParts,
        shutdown: BoxFuture<()>,
    ) -> BoxFuture<std::io::Result<()>> {
        Box::pin(serve(listener, Arc::new(Web::new(parts)), shutdown))
    }
}

/// Serves the view on `listener` until `shutdown` completes: HTTPS with the
/// view's certificate if it has one, else plain HTTP.
pub async fn serve(
    listener: TcpListener,
    web: Arc<Web>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let tls = web.tls.clone();
    let app = router(web).into_make_service_with_connect_info::<listen::Connection>();
    match tls {
        Some(tls) => {
            axum::serve(listen::TlsListener::new(listener, &tls)?, app)
                .with_graceful_shutdown(shutdown)
                .await
        }
        None => {
            axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .await
        }
    }
}
