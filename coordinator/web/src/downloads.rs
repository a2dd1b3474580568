//! The worker for a volunteer without a Rust toolchain: the worker releases
//! (`xq-coordinator worker-release add`) served at plain URLs, no sign-in
//! needed, as anyone who can reach the view may read it.
//!
//! * `GET /download`: every release with its SHA-256, the required
//!   version, and the commands that install a worker.
//! * `GET /download/xq-worker/{TARGET}`: the newest release for the target
//!   triple, streamed from the blob store a chunk at a time, with its
//!   SHA-256 in `x-checksum-sha256` and its version in `x-xq-worker-version`.
//! * `GET /download/xq-worker/{TARGET}.sha256`: the line `sha256sum -c`
//!   checks (`HEX  xq-worker`).
//! * `GET /download/xq-worker.service`: the systemd unit that runs it
//!   (`worker/xq-worker.service`, compiled in).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{Html, IntoResponse};
use minijinja::context;
use serde::Serialize;
use tokio_stream::StreamExt;
use xq_coordinator::service::registry::Release;
use xq_proto::worker_version::PROGRAM;

use crate::Web;
use crate::pages::{Page, WebError, page};
use crate::session::{self, Visitor};
use crate::view;

/// The header that carries a download's SHA-256 (lowercase hex).
pub const SHA256_HEADER: &str = "x-checksum-sha256";

/// The header that carries a download's worker version.
pub const VERSION_HEADER: &str = "x-xq-worker-version";

#[derive(Debug, Serialize)]
struct ReleaseRow {
    version: String,
    target: String,
    sha256: String,
    size: u64,
    required: bool,
    /// The newest for its target: the one its URL serves.
    served: bool,
    registered: String,
}

/// `GET /download`: the commands name the host the page was asked from,
/// over `https://` when it was reached so, with the cluster's `ca.pem` when
/// the view serves the cluster's own certificate.
pub async fn list(State(web): State<Arc<Web>>, visitor: Visitor, headers: HeaderMap) -> Page {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("COORDINATOR-WEB-HOST")
        .to_owned();
    let scheme = if session::secure(&web, &headers) {
        "https"
    } else {
        "http"
    };
    let curl = if web.tls.is_some() {
        "curl --cacert ca.pem"
    } else {
        "curl"
    };
    let (found, required) = web.read_registry().worker_releases().await?;
    let mut seen = std::collections::HashSet::new();
    let releases: Vec<ReleaseRow> = found
        .into_iter()
        .map(|r| ReleaseRow {
            served: seen.insert(r.target.clone()),
            version: r.version.to_string(),
            registered: view::utc(r.created_ms),
            target: r.target,
            sha256: r.sha256,
            size: r.size,
            required: r.required,
        })
        .collect();
    let required = required.map(|v| v.to_string());
    let html = page(
        &web,
        &visitor,
        "downloads.html",
        context! { releases, required, host, scheme, curl, program => PROGRAM },
    )?;
    Ok(Html(html).into_response())
}

/// The systemd unit, as `worker/xq-worker.service` holds it.
pub const UNIT: &str = include_str!("../../../worker/xq-worker.service");

/// `GET /download/xq-worker.service`.
pub async fn unit() -> impl IntoResponse {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            ),
            (
                header::CONTENT_DISPOSITION,
                HeaderValue::from_static("attachment; filename=\"xq-worker.service\""),
            ),
        ],
        UNIT,
    )
}

/// `GET /download/xq-worker/{target}` and `…/{target}.sha256`.
pub async fn worker(State(web): State<Arc<Web>>, Path(target): Path<String>) -> Page {
    let (target, checksum) = match target.strip_suffix(".sha256") {
        Some(t) => (t.to_owned(), true),
        None => (target, false),
    };
    xq_proto::worker_version::check_target("target", &target)
        .map_err(|e| WebError::BadRequest(e.to_string()))?;
    let release: Release = web
        .read_registry()
        .worker_release_for(target.clone())
        .await?
        .ok_or_else(|| {
            WebError::NotFound(format!("no {PROGRAM} release for {target} is registered"))
        })?;
    let header = |v: &str| HeaderValue::from_str(v).map_err(|e| WebError::Render(e.to_string()));
    let version = release.version.to_string();
    if checksum {
        return Ok((
            [
                (
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; charset=utf-8"),
                ),
                (
                    header::HeaderName::from_static(VERSION_HEADER),
                    header(&version)?,
                ),
            ],
            format!("{}  {PROGRAM}\n", release.sha256),
        )
            .into_response());
    }
    let chunks = web
        .read_registry()
        .download(release.sha256.clone())
        .await
        .map_err(WebError::Refused)?
        .map(|chunk| chunk.map(|c| Bytes::from(c.data)));
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            ),
            (
                header::CONTENT_DISPOSITION,
                HeaderValue::from_static("attachment; filename=\"xq-worker\""),
            ),
            (header::CONTENT_LENGTH, header(&release.size.to_string())?),
            (
                header::HeaderName::from_static(SHA256_HEADER),
                header(&release.sha256)?,
            ),
            (
                header::HeaderName::from_static(VERSION_HEADER),
                header(&version)?,
            ),
        ],
        Body::from_stream(chunks),
    )
        .into_response())
}
