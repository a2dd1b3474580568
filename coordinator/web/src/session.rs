//! Who is looking at a page, and who makes a change: sign-in sessions,
//! cookies and CSRF tokens.
//!
//! # Design
//!
//! * Signing in makes a session: a random secret (`xqs_` + 64 hex digits)
//!   in the cookie `xq_session` (`HttpOnly`, `SameSite=Lax`, `Path=/`,
//!   `Max-Age` of [`SESSION_TTL`], `Secure` when the view is reached over
//!   HTTPS), stored only as its SHA-256 hash with its end
//!   ([`xq_coordinator::service::accounts`]). A session ends at that time
//!   (absolute, not renewed) or when its user signs out.
//! * Every form carries a CSRF token in its `csrf` field. A signed-in
//!   visitor's is derived from the session secret (SHA-256 of `csrf:` and
//!   the secret), so another site can neither read nor make it. A visitor
//!   who is not signed in (the sign-in and sign-up forms) gets a random one
//!   in the cookie `xq_csrf` (`HttpOnly`, `SameSite=Strict`), which the form
//!   must repeat. A POST whose token is missing or wrong, or whose `Origin`
//!   is another site, is refused with 403 before anything else.
//! * A change is made by the signed-in user, or by the caller of an
//!   `authorization: Bearer` header (scripts; a header is not sent by a
//!   browser on its own, so it needs no CSRF token), with the same checks
//!   as the gRPC method ([`acting`]).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use serde::Serialize;

use crate::Web;
use crate::error::WebError;
use xq_coordinator::access::Principal;
use xq_coordinator::access::UserRole;
use xq_coordinator::access::tokens::{self, TokenHash};
use xq_coordinator::events::Actor;
use xq_coordinator::service::accounts::User;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "xq_session";
/// The cookie of a visitor's CSRF token before they sign in.
pub const CSRF_COOKIE: &str = "xq_csrf";
/// How long a session lasts after signing in.
pub const SESSION_TTL: Duration = Duration::from_secs(24 * 3600);

const SESSION_PREFIX: &str = "xqs_";
const CSRF_PREFIX: &str = "xqc_";

/// Whether `value` has the shape of a secret made with `prefix`.
fn well_formed(value: &str, prefix: &str) -> bool {
    value.strip_prefix(prefix).is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// The value of cookie `name` in `headers`.
fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// A `Set-Cookie` value: `HttpOnly`, `Path=/`, `Secure` if `secure`.
fn set_cookie(name: &str, value: &str, same_site: &str, max_age: u64, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{name}={value}; Path=/; HttpOnly; SameSite={same_site}; Max-Age={max_age}{secure}")
}

/// Whether cookies for this request get `Secure`: the view is configured
/// as reached over HTTPS, or a proxy says this request came that way.
pub(crate) fn secure(web: &Web, headers: &HeaderMap) -> bool {
    web.secure_cookies
        || headers
            .get("x-forwarded-proto")
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https"))
}

/// The CSRF token of a visitor without a session, as the middleware
/// [`csrf_cookie`] found or made it.
#[derive(Debug, Clone)]
struct AnonymousCsrf(String);

/// Gives a visitor without a well-formed `xq_csrf` cookie a new one.
pub async fn csrf_cookie(
    State(web): State<Arc<Web>>,
    mut request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    if cookie(headers, CSRF_COOKIE).is_some_and(|v| well_formed(v, CSRF_PREFIX)) {
        return next.run(request).await;
    }
    let Ok(fresh) = tokens::generate_secret(CSRF_PREFIX) else {
        return next.run(request).await;
    };
    let secure = secure(&web, headers);
    request
        .extensions_mut()
        .insert(AnonymousCsrf(fresh.clone()));
    let mut response = next.run(request).await;
    let value = set_cookie(CSRF_COOKIE, &fresh, "Strict", SESSION_TTL.as_secs(), secure);
    if let Ok(value) = HeaderValue::from_str(&value) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

/// Headers every answer carries: no framing by other sites (clickjacking
/// of the forms), no content sniffing, no address leaked to other sites.
pub async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in [
        ("x-frame-options", "DENY"),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "same-origin"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// The field of a form that carries nothing but its CSRF token.
#[derive(Debug, Default, serde::Deserialize)]
pub struct CsrfForm {
    #[serde(default)]
    pub csrf: String,
}

/// The signed-in user as pages show them.
#[derive(Debug, Clone, Serialize)]
pub struct Me {
    pub id: u64,
    pub name: String,
    pub role: &'static str,
    pub trusted: bool,
    /// May approve, trust developers and change anyone's tests.
    pub approver: bool,
    /// May manage users.
    pub admin: bool,
}

impl From<&User> for Me {
    fn from(u: &User) -> Me {
        Me {
            id: u.id,
            name: u.name.clone(),
            role: u.role.as_str(),
            trusted: u.trusted,
            approver: u.role >= UserRole::Approver,
            admin: u.role == UserRole::Admin,
        }
    }
}

/// Who sent a request: their user if signed in, and the CSRF token their
/// forms carry.
#[derive(Debug, Clone)]
pub struct Visitor {
    pub user: Option<User>,
    /// The hash of the session's secret, when signed in.
    session: Option<TokenHash>,
    pub csrf: String,
}

impl Visitor {
    /// The signed-in user as templates see them.
    pub fn me(&self) -> Option<Me> {
        self.user.as_ref().map(Me::from)
    }

    /// The signed-in user, or 401.
    pub fn signed_in(&self) -> Result<&User, WebError> {
        self.user.as_ref().ok_or_else(|| {
            WebError::Refused(tonic::Status::unauthenticated(
                "sign in first (or send an authorization: Bearer header)",
            ))
        })
    }

    /// The session's hash, when signed in.
    pub fn session(&self) -> Option<&TokenHash> {
        self.session.as_ref()
    }

    /// Refuses a form whose CSRF token is not this visitor's, or a request
    /// whose `Origin` is another site than its `Host`.
    pub fn check_form(&self, headers: &HeaderMap, csrf: Option<&str>) -> Result<(), WebError> {
        if let Some(origin) = headers.get(header::ORIGIN) {
            let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
            let origin_host = origin
                .to_str()
                .ok()
                .and_then(|o| o.split_once("://"))
                .map(|(_, rest)| rest.trim_end_matches('/'));
            if origin.as_bytes() != b"null" && (host.is_none() || origin_host != host) {
                return Err(forbidden("the form was sent from another site"));
            }
        }
        let given = csrf.unwrap_or("");
        let matches = !self.csrf.is_empty()
            && tokens::hashes_equal(&tokens::hash(given), &tokens::hash(&self.csrf));
        if matches {
            Ok(())
        } else {
            Err(forbidden(
                "the form's CSRF token is missing or wrong; reload the page and send it again",
            ))
        }
    }
}

pub(crate) fn forbidden(message: &str) -> WebError {
    WebError::Refused(tonic::Status::permission_denied(message))
}

/// The CSRF token of the session with secret `secret`.
fn session_csrf(secret: &str) -> String {
    xq_proto::blob::lower_hex(&tokens::hash(&format!("csrf:{secret}")))
}

impl FromRequestParts<Arc<Web>> for Visitor {
    type Rejection = WebError;

    async fn from_request_parts(parts: &mut Parts, web: &Arc<Web>) -> Result<Self, WebError> {
        let secret = cookie(&parts.headers, SESSION_COOKIE)
            .filter(|v| well_formed(v, SESSION_PREFIX))
            .map(str::to_owned);
        if let Some(secret) = secret {
            let hash = tokens::hash(&secret);
            let user = web.read_accounts().session_user(hash).await?;
            if let Some(user) = user {
                return Ok(Visitor {
                    user: Some(user),
                    session: Some(hash),
                    csrf: session_csrf(&secret),
                });
            }
        }
        let csrf = match parts.extensions.get::<AnonymousCsrf>() {
            Some(AnonymousCsrf(fresh)) => fresh.clone(),
            None => cookie(&parts.headers, CSRF_COOKIE)
                .filter(|v| well_formed(v, CSRF_PREFIX))
                .unwrap_or_default()
                .to_owned(),
        };
        Ok(Visitor {
            user: None,
            session: None,
            csrf,
        })
    }
}

/// A new session for `user`: its secret, to be set as the cookie, and the
/// cookie header value.
pub(crate) async fn open(
    web: &Web,
    headers: &HeaderMap,
    user: u64,
) -> Result<HeaderValue, WebError> {
    let secret = tokens::generate_secret(SESSION_PREFIX)
        .map_err(|e| WebError::Render(format!("cannot make a session: {e}")))?;
    let hash = tokens::hash(&secret);
    let ttl = SESSION_TTL.as_millis() as i64;
    web.accounts().open_session(hash, user, ttl).await?;
    let value = set_cookie(
        SESSION_COOKIE,
        &secret,
        "Lax",
        SESSION_TTL.as_secs(),
        secure(web, headers),
    );
    HeaderValue::from_str(&value).map_err(|e| WebError::Render(e.to_string()))
}

/// The cookie header value that removes the session cookie.
pub(crate) fn closed(web: &Web, headers: &HeaderMap) -> HeaderValue {
    HeaderValue::from_str(&set_cookie(
        SESSION_COOKIE,
        "",
        "Lax",
        0,
        secure(web, headers),
    ))
    .unwrap_or_else(|_| HeaderValue::from_static("xq_session=; Path=/; Max-Age=0"))
}

/// The caller of a write made with an `authorization: Bearer` header,
/// checked as gRPC's `method` is.
pub(crate) async fn admin(
    web: &Web,
    method: &str,
    headers: &HeaderMap,
) -> Result<Principal, WebError> {
    let path = format!("/xq.cluster.v1.RunService/{method}");
    let principal = web
        .auth
        .authorize(&path, headers)
        .await
        .map_err(WebError::Refused)?;
    tracing::info!(token = %principal.name, method, "web view call with a token");
    Ok(principal)
}

/// Who makes a change through gRPC's `method`: the caller of an
/// `authorization` header (checked as gRPC checks it), else the signed-in
/// visitor whose form carries their CSRF token (403 without it); 401 for
/// neither.
pub(crate) async fn acting(
    web: &Web,
    visitor: &Visitor,
    headers: &HeaderMap,
    method: &str,
    csrf: Option<&str>,
) -> Result<Actor, WebError> {
    if headers.contains_key(header::AUTHORIZATION) {
        let caller = admin(web, method, headers).await?;
        return Ok(Actor::from(&caller));
    }
    let user = visitor.signed_in()?;
    visitor.check_form(headers, csrf)?;
    tracing::info!(user = %user.name, method, "web view change");
    Ok(Actor::user(user.id, &user.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_read_by_name_and_secrets_by_shape() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; xq_session=xqs_00; xq_csrf=zz"),
        );
        assert_eq!(cookie(&headers, "xq_session"), Some("xqs_00"));
        assert_eq!(cookie(&headers, "xq_csrf"), Some("zz"));
        assert_eq!(cookie(&headers, "b"), None);
        assert!(!well_formed("xqs_00", SESSION_PREFIX));
        let fresh = tokens::generate_secret(SESSION_PREFIX).unwrap();
        assert!(well_formed(&fresh, SESSION_PREFIX));
        assert!(!well_formed(&fresh, CSRF_PREFIX));
        assert!(!well_formed(&fresh.to_uppercase(), SESSION_PREFIX));
    }

    #[test]
    fn session_cookies_have_their_flags() {
        let c = set_cookie(SESSION_COOKIE, "xqs_1", "Lax", 60, true);
        assert_eq!(
            c,
            "xq_session=xqs_1; Path=/; HttpOnly; SameSite=Lax; Max-Age=60; Secure"
        );
        assert!(!set_cookie(SESSION_COOKIE, "v", "Lax", 60, false).contains("Secure"));
    }

    fn visitor(csrf: &str) -> Visitor {
        Visitor {
            user: None,
            session: None,
            csrf: csrf.to_owned(),
        }
    }

    #[test]
    fn a_form_needs_the_visitors_token_and_its_own_origin() {
        let v = visitor("xqc_token");
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("tester:8080"));
        assert!(v.check_form(&headers, Some("xqc_token")).is_ok());
        assert!(v.check_form(&headers, Some("xqc_other")).is_err());
        assert!(v.check_form(&headers, None).is_err());
        assert!(visitor("").check_form(&headers, Some("")).is_err());
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://tester:8080"),
        );
        assert!(v.check_form(&headers, Some("xqc_token")).is_ok());
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://evil.example"),
        );
        let refused = v.check_form(&headers, Some("xqc_token")).unwrap_err();
        assert!(refused.to_string().contains("another site"), "{refused}");
    }

    #[test]
    fn a_sessions_csrf_token_is_derived_and_not_the_secret() {
        let a = session_csrf("xqs_a");
        assert_eq!(a, session_csrf("xqs_a"));
        assert_ne!(a, session_csrf("xqs_b"));
        assert!(!a.contains("xqs_a"));
    }
}
