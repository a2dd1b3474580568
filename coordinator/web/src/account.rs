//! Signing in, signing up and signing out.
//!
//! Sign-in checks the password with the server's [`Authenticator::sign_in`]
//! (the limits per address and per name of the CLI's `login`); a wrong name
//! or password is one answer (401), a limited attempt 429. Sign-up makes an
//! untrusted developer (their tests wait for approval until an approver
//! trusts them), logged as a `user` event, and signs them in; it spends the
//! address's sign-in attempts too. The address is the TCP peer's: behind a
//! proxy every visitor shares the proxy's.
//!
//! [`Authenticator::sign_in`]: xq_coordinator::auth::Authenticator::sign_in

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use axum::Form;
use axum::extract::rejection::FormRejection;
use axum::extract::{ConnectInfo, FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use minijinja::context;
use serde::Deserialize;

use crate::Web;
use crate::listen::Connection;
use crate::pages::{Page, WebError, page};
use crate::session::{self, CsrfForm, Visitor};
use xq_coordinator::access::passwords::{self, PasswordError};
use xq_coordinator::auth::sign_in::SignInError;
use xq_coordinator::service::StoreError;
use xq_coordinator::service::accounts::check_user_name;

/// The client's address, which the sign-in limits count against: the TCP
/// peer's (unspecified when the server was not given it), or, when the peer
/// is a trusted proxy, [`forwarded_client`].
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub IpAddr);

impl FromRequestParts<Arc<Web>> for Peer {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        web: &Arc<Web>,
    ) -> Result<Self, Self::Rejection> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<Connection>>()
            .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0.0.ip());
        Ok(Peer(forwarded_client(
            peer,
            &parts.headers,
            &web.trusted_proxies,
        )))
    }
}

/// The client behind `peer`: if `peer` is one of the `trusted` proxies, the
/// right-most `X-Forwarded-For` address that is not itself a trusted proxy
/// (the left-most entries are whatever the client chose to send, so only
/// what the trusted proxies appended is believed); `peer` otherwise, and
/// when the header names none.
pub fn forwarded_client(peer: IpAddr, headers: &HeaderMap, trusted: &[IpAddr]) -> IpAddr {
    if !trusted.contains(&peer) {
        return peer;
    }
    let entries: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .collect();
    for entry in entries.iter().rev() {
        match entry.trim().parse::<IpAddr>() {
            Ok(ip) if trusted.contains(&ip) => {}
            Ok(ip) => return ip,
            Err(_) => return peer,
        }
    }
    peer
}

/// The argon2id hash of `password` (made off the async threads: it takes
/// tens of milliseconds), or why the password is refused.
pub(crate) async fn hashed(password: &str) -> Result<Result<String, PasswordError>, WebError> {
    let password = password.to_owned();
    tokio::task::spawn_blocking(move || passwords::hash(&password))
        .await
        .map_err(|e| WebError::Render(e.to_string()))
}

/// The sign-in and sign-up forms' fields.
#[derive(Debug, Default, Deserialize)]
pub struct AccountForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    password: String,
    /// Sign-up only: the password again.
    #[serde(default)]
    confirm: String,
    #[serde(default)]
    csrf: String,
}

fn show(
    web: &Web,
    visitor: &Visitor,
    template: &str,
    status: StatusCode,
    name: &str,
    error: Option<String>,
) -> Page {
    let html = page(web, visitor, template, context! { name, error })?;
    Ok((status, Html(html)).into_response())
}

fn form_of(form: Result<Form<AccountForm>, FormRejection>) -> Result<AccountForm, WebError> {
    form.map(|Form(f)| f)
        .map_err(|e| WebError::BadRequest(e.body_text()))
}

/// A redirect home that sets the session cookie `cookie`.
fn signed_in(cookie: header::HeaderValue) -> Response {
    let mut response = Redirect::to("/").into_response();
    response.headers_mut().append(header::SET_COOKIE, cookie);
    response
}

/// `GET /sign-in`.
pub async fn sign_in_form(State(web): State<Arc<Web>>, visitor: Visitor) -> Page {
    show(&web, &visitor, "sign_in.html", StatusCode::OK, "", None)
}

/// `POST /sign-in`.
pub async fn sign_in(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    Peer(from): Peer,
    headers: HeaderMap,
    form: Result<Form<AccountForm>, FormRejection>,
) -> Page {
    let form = form_of(form)?;
    visitor.check_form(&headers, Some(&form.csrf))?;
    match web.auth.sign_in(&form.name, &form.password, from).await {
        Ok(user) => {
            tracing::info!(user = %user.name, "web sign-in");
            Ok(signed_in(session::open(&web, &headers, user.id).await?))
        }
        Err(e) => {
            let status = match &e {
                SignInError::Wrong => StatusCode::UNAUTHORIZED,
                SignInError::Limited { .. } => StatusCode::TOO_MANY_REQUESTS,
                SignInError::Store(_) => StatusCode::SERVICE_UNAVAILABLE,
            };
            let name = xq_proto::quote(&form.name);
            tracing::info!(user = %name, %from, error = %e, "web sign-in refused");
            show(
                &web,
                &visitor,
                "sign_in.html",
                status,
                &form.name,
                Some(e.to_string()),
            )
        }
    }
}

/// The refusal of a sign-up where only admins add users.
fn closed(web: &Web) -> Result<(), WebError> {
    if web.open_sign_up {
        Ok(())
    } else {
        Err(session::forbidden(
            "this coordinator makes no accounts by sign-up: ask an admin for one",
        ))
    }
}

/// `GET /sign-up`.
pub async fn sign_up_form(State(web): State<Arc<Web>>, visitor: Visitor) -> Page {
    closed(&web)?;
    show(&web, &visitor, "sign_up.html", StatusCode::OK, "", None)
}

/// `POST /sign-up`: a new untrusted developer, signed in.
pub async fn sign_up(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    Peer(from): Peer,
    headers: HeaderMap,
    form: Result<Form<AccountForm>, FormRejection>,
) -> Page {
    closed(&web)?;
    let form = form_of(form)?;
    visitor.check_form(&headers, Some(&form.csrf))?;
    let refuse = |status, message: String| {
        show(
            &web,
            &visitor,
            "sign_up.html",
            status,
            &form.name,
            Some(message),
        )
    };
    if let Err(e) = web.auth.sign_up_attempt(from) {
        return refuse(StatusCode::TOO_MANY_REQUESTS, e.to_string());
    }
    if let Err(e) = check_user_name(&form.name) {
        return refuse(StatusCode::BAD_REQUEST, e.to_string());
    }
    if form.password != form.confirm {
        return refuse(
            StatusCode::BAD_REQUEST,
            "the two passwords differ".to_owned(),
        );
    }
    let hash = match hashed(&form.password).await? {
        Ok(hash) => hash,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, e.to_string()),
    };
    let made = web.accounts().sign_up(form.name.clone(), hash).await;
    match made {
        Ok(id) => {
            tracing::info!(user = %form.name, "web sign-up");
            Ok(signed_in(session::open(&web, &headers, id).await?))
        }
        Err(StoreError::Invalid(e)) => refuse(StatusCode::BAD_REQUEST, e.to_string()),
        Err(e) => Err(e.into()),
    }
}

/// `POST /sign-out`: ends the session.
pub async fn sign_out(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    headers: HeaderMap,
    form: Result<Form<CsrfForm>, FormRejection>,
) -> Page {
    let form = form.map_err(|e| WebError::BadRequest(e.body_text()))?.0;
    visitor.check_form(&headers, Some(&form.csrf))?;
    if let Some(hash) = visitor.session().copied() {
        web.accounts().end_session(hash).await?;
    }
    let mut response = Redirect::to("/").into_response();
    response
        .headers_mut()
        .append(header::SET_COOKIE, session::closed(&web, &headers));
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append("x-forwarded-for", v.parse().unwrap());
        }
        headers
    }

    #[test]
    fn only_a_trusted_proxy_names_the_client() {
        let proxy = ip("10.0.0.1");
        let trusted = [proxy, ip("10.0.0.2")];
        let headers = forwarded(&["198.51.100.7"]);
        assert_eq!(
            forwarded_client(proxy, &headers, &trusted),
            ip("198.51.100.7")
        );
        let stranger = ip("203.0.113.5");
        assert_eq!(forwarded_client(stranger, &headers, &trusted), stranger);
        assert_eq!(forwarded_client(stranger, &headers, &[]), stranger);
    }

    #[test]
    fn what_the_client_wrote_itself_is_not_believed() {
        let proxy = ip("10.0.0.1");
        let trusted = [proxy, ip("10.0.0.2")];
        // The client sent "1.2.3.4"; the outer proxy appended the client's
        // real address, the inner one the outer proxy's.
        let headers = forwarded(&["1.2.3.4, 198.51.100.7", "10.0.0.2"]);
        assert_eq!(
            forwarded_client(proxy, &headers, &trusted),
            ip("198.51.100.7")
        );
        assert_eq!(forwarded_client(proxy, &forwarded(&[]), &trusted), proxy);
        let junk = forwarded(&["198.51.100.7, unknown"]);
        assert_eq!(forwarded_client(proxy, &junk, &trusted), proxy);
    }
}
