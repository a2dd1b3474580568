//! Refusals a browser sees as pages: an answer made from a [`WebError`]
//! (401, 403, 404, …) to a request that accepts HTML is rendered in the
//! site's layout, with its navigation and the visitor's account links;
//! scripts, `curl` and API callers keep the plain-text answer.

use std::sync::Arc;

use axum::extract::{FromRequestParts, Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use minijinja::context;

use crate::Web;
use crate::error::ErrorText;
use crate::pages;
use crate::session::Visitor;

/// Whether the request's `Accept` names HTML (what browsers send for a page).
fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/html"))
}

/// Renders a [`WebError`]'s answer as `error.html` for a browser; the
/// status and headers (e.g. `WWW-Authenticate`) stay. Any other answer,
/// or one the page cannot be rendered for, passes as it is.
pub async fn html(State(web): State<Arc<Web>>, request: Request, next: Next) -> Response {
    if !wants_html(request.headers()) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let mut kept = Request::new(()).into_parts().0;
    kept.headers = parts.headers.clone();
    kept.extensions = parts.extensions.clone();
    let response = next.run(Request::from_parts(parts, body)).await;
    let Some(ErrorText(message)) = response.extensions().get::<ErrorText>().cloned() else {
        return response;
    };
    let Ok(visitor) = Visitor::from_request_parts(&mut kept, &web).await else {
        return response;
    };
    let status = response.status();
    let ctx = context! {
        code => status.as_u16(),
        reason => status.canonical_reason().unwrap_or(""),
        message,
    };
    match pages::page(&web, &visitor, "error.html", ctx) {
        Ok(page) => {
            let (mut head, _) = response.into_parts();
            head.headers.remove(header::CONTENT_TYPE);
            head.headers.remove(header::CONTENT_LENGTH);
            (head, Html(page)).into_response()
        }
        Err(e) => {
            tracing::error!(error = %e, "web view: the error page");
            response
        }
    }
}
