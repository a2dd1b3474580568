//! The users page: approvers see every user and mark developers trusted
//! (their tests then start without approval); admins also add users and
//! change roles. Each change is a `user` event, written with it.

use std::sync::Arc;

use axum::Form;
use axum::extract::rejection::FormRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect};
use minijinja::context;
use serde::{Deserialize, Serialize};

use crate::Web;
use crate::pages::{Page, WebError, page};
use crate::session::{Visitor, forbidden};
use xq_coordinator::access::UserRole;
use xq_coordinator::events::Actor;
use xq_coordinator::service::StoreError;
use xq_coordinator::service::accounts::{NewUser, User, UserChange};

#[derive(Debug, Serialize)]
struct UserRow {
    name: String,
    role: &'static str,
    trusted: bool,
    has_password: bool,
    created: String,
}

/// The signed-in user and their role at least `needed`, or the refusal.
fn at_least(visitor: &Visitor, needed: UserRole) -> Result<&User, WebError> {
    let me = visitor.signed_in()?;
    if me.role < needed {
        return Err(forbidden(&format!(
            "this needs the {} role; you are {}",
            needed.as_str(),
            me.role.as_str()
        )));
    }
    Ok(me)
}

async fn show(web: &Web, visitor: &Visitor, status: StatusCode, error: Option<String>) -> Page {
    let rows: Vec<UserRow> = web
        .read_accounts()
        .users()
        .await?
        .into_iter()
        .map(|u| UserRow {
            name: u.name,
            role: u.role.as_str(),
            trusted: u.trusted,
            has_password: u.has_password,
            created: crate::view::utc(u.created_ms),
        })
        .collect();
    let roles = UserRole::ALL.map(UserRole::as_str);
    let html = page(
        web,
        visitor,
        "users.html",
        context! { users => rows, roles, error },
    )?;
    Ok((status, Html(html)).into_response())
}

/// `GET /users` (approvers and admins).
pub async fn list(State(web): State<Arc<Web>>, visitor: Visitor) -> Page {
    if visitor.user.is_none() {
        return Ok(Redirect::to("/sign-in").into_response());
    }
    at_least(&visitor, UserRole::Approver)?;
    show(&web, &visitor, StatusCode::OK, None).await
}

/// The add-user form's fields.
#[derive(Debug, Default, Deserialize)]
pub struct AddForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    role: String,
    /// Empty: the user cannot sign in until an admin sets one on the CLI.
    #[serde(default)]
    password: String,
    #[serde(default)]
    trusted: Option<String>,
}

/// `POST /users` (admins): adds a user.
pub async fn add(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    headers: HeaderMap,
    form: Result<Form<AddForm>, FormRejection>,
) -> Page {
    let form = form.map_err(|e| WebError::BadRequest(e.body_text()))?.0;
    visitor.check_form(&headers, Some(&form.csrf))?;
    let me = at_least(&visitor, UserRole::Admin)?;
    let role: UserRole = match form.role.parse() {
        Ok(role) => role,
        Err(e) => return show(&web, &visitor, StatusCode::BAD_REQUEST, Some(e)).await,
    };
    let hash = if form.password.is_empty() {
        None
    } else {
        match crate::account::hashed(&form.password).await? {
            Ok(hash) => Some(hash),
            Err(e) => {
                return show(&web, &visitor, StatusCode::BAD_REQUEST, Some(e.to_string())).await;
            }
        }
    };
    let new = NewUser {
        name: form.name.clone(),
        role,
        password_hash: hash,
        trusted: form.trusted.is_some(),
    };
    let added = web
        .accounts()
        .add_user(Actor::user(me.id, &me.name), new)
        .await;
    match added {
        Ok(_) => Ok(Redirect::to("/users").into_response()),
        Err(StoreError::Invalid(e)) => {
            show(&web, &visitor, StatusCode::BAD_REQUEST, Some(e.to_string())).await
        }
        Err(e) => Err(e.into()),
    }
}

/// A user's change: a new role (admins) and trust.
#[derive(Debug, Default, Deserialize)]
pub struct ChangeForm {
    #[serde(default)]
    csrf: String,
    /// Empty: the role stays.
    #[serde(default)]
    role: String,
    /// `yes` or `no`.
    #[serde(default)]
    trusted: String,
}

/// `POST /users/{name}`: an admin sets the role and trust; an approver
/// trusts or distrusts a developer. Nobody changes their own role.
pub async fn change(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    Path(name): Path<String>,
    headers: HeaderMap,
    form: Result<Form<ChangeForm>, FormRejection>,
) -> Page {
    let form = form.map_err(|e| WebError::BadRequest(e.body_text()))?.0;
    visitor.check_form(&headers, Some(&form.csrf))?;
    let me = at_least(&visitor, UserRole::Approver)?.clone();
    let user = web
        .read_accounts()
        .user_named(name.clone())
        .await?
        .ok_or_else(|| WebError::NotFound(format!("no user {}", xq_proto::quote(&name))))?;
    let role = match form.role.as_str() {
        "" => None,
        r => Some(r.parse::<UserRole>().map_err(WebError::BadRequest)?),
    };
    let trusted = match form.trusted.as_str() {
        "" => None,
        "yes" => Some(true),
        "no" => Some(false),
        other => {
            return Err(WebError::BadRequest(format!(
                "trusted is yes or no, not {}",
                xq_proto::quote(other)
            )));
        }
    };
    // Who may change what (admins roles, approvers developers' trust,
    // nobody their own role) is the accounts service's to decide.
    web.accounts()
        .set_user(
            Actor::user(me.id, &me.name),
            user.name,
            UserChange { role, trusted },
        )
        .await?;
    Ok(Redirect::to("/users").into_response())
}
