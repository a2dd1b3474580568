//! The signed-in user's own page (`/account`): their password, and their
//! tokens. A user makes personal tokens (for the CLI and scripts, acting as
//! them) and worker tokens (for their machines: the workers page shows them
//! as the owner), each shown once when made and stored only as its hash,
//! and revokes their own; an admin may revoke anyone's on the CLI. Token
//! changes go through [`Accounts`], as the wire's do, with their events.

use std::sync::Arc;

use axum::Form;
use axum::extract::State;
use axum::extract::rejection::FormRejection;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect};
use minijinja::context;
use serde::{Deserialize, Serialize};

use crate::Web;
use crate::account::Peer;
use crate::pages::{Page, WebError, page};
use crate::session::{self, Visitor};
use xq_coordinator::access::{Role, tokens};
use xq_coordinator::auth::sign_in::SignInError;
use xq_coordinator::events::Actor;
use xq_coordinator::service::StoreError;
use xq_coordinator::service::accounts::User;

#[derive(Debug, Serialize)]
struct TokenView {
    name: String,
    role: &'static str,
    created: String,
    revoked: Option<String>,
}

/// A token made just now, shown once.
#[derive(Debug, Serialize)]
struct Made {
    name: String,
    role: &'static str,
    text: String,
}

async fn show(
    web: &Web,
    visitor: &Visitor,
    status: StatusCode,
    error: Option<String>,
    made: Option<Made>,
) -> Page {
    let me = visitor.signed_in()?;
    let tokens: Vec<TokenView> = web
        .read_accounts()
        .tokens(&Actor::user(me.id, &me.name), false)
        .await?
        .into_iter()
        .map(|t| TokenView {
            name: t.name,
            role: t.role.as_str(),
            created: crate::view::utc(t.created_ms),
            revoked: t.revoked_ms.map(crate::view::utc),
        })
        .collect();
    let shown = made.is_some();
    let html = page(
        web,
        visitor,
        "account.html",
        context! { tokens, error, made },
    )?;
    let mut response = (status, Html(html)).into_response();
    if shown {
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    Ok(response)
}

/// `GET /account`: the signed-in user's own page.
pub async fn account(State(web): State<Arc<Web>>, visitor: Visitor) -> Page {
    if visitor.user.is_none() {
        return Ok(Redirect::to("/sign-in").into_response());
    }
    show(&web, &visitor, StatusCode::OK, None, None).await
}

/// The password form's fields.
#[derive(Debug, Default, Deserialize)]
pub struct PasswordForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    current: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    confirm: String,
}

/// The hash of the form's new password, or why it is refused.
async fn new_password(
    web: &Web,
    me: &User,
    form: &PasswordForm,
    from: std::net::IpAddr,
) -> Result<Result<String, (StatusCode, String)>, WebError> {
    if form.password != form.confirm {
        return Ok(Err((
            StatusCode::BAD_REQUEST,
            "the new passwords differ".to_owned(),
        )));
    }
    match web.auth.sign_in(&me.name, &form.current, from).await {
        Ok(_) => {}
        Err(e @ SignInError::Limited { .. }) => {
            return Ok(Err((StatusCode::TOO_MANY_REQUESTS, e.to_string())));
        }
        Err(_) => {
            return Ok(Err((
                StatusCode::UNAUTHORIZED,
                "the current password is wrong".to_owned(),
            )));
        }
    }
    let hashed = crate::account::hashed(&form.password).await?;
    Ok(hashed.map_err(|e| (StatusCode::BAD_REQUEST, e.to_string())))
}

/// `POST /account/password`: a new password, checked with the current one
/// (within the sign-in limits). Every session of the user ends, and this
/// browser gets a new one.
pub async fn change_password(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    Peer(from): Peer,
    headers: HeaderMap,
    form: Result<Form<PasswordForm>, FormRejection>,
) -> Page {
    let form = form.map_err(|e| WebError::BadRequest(e.body_text()))?.0;
    let me = visitor.signed_in()?.clone();
    visitor.check_form(&headers, Some(&form.csrf))?;
    let hash = match new_password(&web, &me, &form, from).await? {
        Ok(hash) => hash,
        Err((status, message)) => return show(&web, &visitor, status, Some(message), None).await,
    };
    let id = me.id;
    web.accounts()
        .change_password(Actor::user(me.id, &me.name), hash)
        .await?;
    // This session ended with the others: a new one keeps the user signed in.
    let cookie = session::open(&web, &headers, id).await?;
    let mut response = Redirect::to("/account?changed=1").into_response();
    response.headers_mut().append(header::SET_COOKIE, cookie);
    Ok(response)
}

/// The new-token form's fields.
#[derive(Debug, Default, Deserialize)]
pub struct TokenForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    name: String,
    /// `personal` or `worker`.
    #[serde(default)]
    role: String,
}

/// `POST /account/tokens`: a new token of the signed-in user, shown once.
pub async fn create_token(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    headers: HeaderMap,
    form: Result<Form<TokenForm>, FormRejection>,
) -> Page {
    let form = form.map_err(|e| WebError::BadRequest(e.body_text()))?.0;
    let me = visitor.signed_in()?.clone();
    visitor.check_form(&headers, Some(&form.csrf))?;
    let role = match form.role.as_str() {
        "personal" => Role::Personal,
        "worker" => Role::Worker,
        other => {
            return Err(WebError::BadRequest(format!(
                "a token's role is personal or worker, not {}",
                xq_proto::quote(other)
            )));
        }
    };
    let text = tokens::generate().map_err(|e| WebError::Render(e.to_string()))?;
    let made = web
        .accounts()
        .create_token(
            Actor::user(me.id, &me.name),
            form.name.clone(),
            role,
            tokens::hash(&text),
        )
        .await;
    match made {
        Ok(row) => {
            let made = Made {
                name: row.name,
                role: role.as_str(),
                text,
            };
            show(&web, &visitor, StatusCode::OK, None, Some(made)).await
        }
        Err(StoreError::Invalid(e)) => {
            show(
                &web,
                &visitor,
                StatusCode::BAD_REQUEST,
                Some(e.to_string()),
                None,
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}

/// The revoke form's fields.
#[derive(Debug, Default, Deserialize)]
pub struct RevokeForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    name: String,
}

/// `POST /account/tokens/revoke`: revokes one of the user's own tokens; it
/// is refused from its next call on.
pub async fn revoke_token(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    headers: HeaderMap,
    form: Result<Form<RevokeForm>, FormRejection>,
) -> Page {
    let form = form.map_err(|e| WebError::BadRequest(e.body_text()))?.0;
    let me = visitor.signed_in()?.clone();
    visitor.check_form(&headers, Some(&form.csrf))?;
    web.accounts()
        .revoke_token(Actor::user(me.id, &me.name), form.name)
        .await?;
    Ok(Redirect::to("/account").into_response())
}
