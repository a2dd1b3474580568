//! The administration service on the wire: the users (`AddUser`,
//! `ListUsers`, `SetUser`, for an admin) and the event log (`ListEvents`,
//! for any token). The CLI's `user` and `events` call it remotely and, on a
//! database file, in their own process as the file's administrator
//! ([`crate::in_process`]); both ways reach the same handlers.
//!
//! Who may: the auth layer has let through a personal token (or the
//! in-process administrator); the handlers of the user methods then read
//! the caller's role from the store, as `ListTokens` does.

use tonic::{Request, Response, Status};
use xq_proto::pb;
use xq_proto::pb::admin_service_server::AdminService;

use crate::access::{Principal, UserRole, passwords};
use crate::account_service::MAX_PASSWORD;
use crate::auth::caller;
use crate::convert;
use crate::events::{Actor, EventFilter};
use crate::store::{Store, events, now_ms, users};

/// The administration service's state.
#[derive(Debug)]
pub struct AdminServer {
    /// User changes, each one transaction with its `user` event.
    store: Store,
    /// Lists read here, not on the writer's queue.
    reader: Store,
}

impl AdminServer {
    pub fn new(store: Store, reader: Store) -> Self {
        AdminServer { store, reader }
    }

    /// The caller, once it is known to be an admin: the in-process
    /// administrator, or a personal token whose user is an admin now.
    async fn admin<T>(&self, request: &Request<T>) -> Result<Principal, Status> {
        let principal = caller(request)?;
        if principal.is_in_process() {
            return Ok(principal);
        }
        let Some(id) = principal.user else {
            return Err(Status::permission_denied(format!(
                "token {} belongs to no user; managing users needs an admin's personal token",
                xq_proto::quote(&principal.name)
            )));
        };
        let user = self.reader.call(move |conn| users::by_id(conn, id)).await?;
        if user.role != UserRole::Admin {
            return Err(Status::permission_denied(format!(
                "a {} may not manage users; an admin may",
                user.role.as_str()
            )));
        }
        Ok(principal)
    }
}

/// The argon2id hash of `password` (none for an empty one), computed off
/// the async threads.
async fn password_hash(password: String) -> Result<Option<String>, Status> {
    if password.is_empty() {
        return Ok(None);
    }
    if password.len() > MAX_PASSWORD {
        return Err(xq_proto::Invalid::new(
            "password",
            format!("must be 1 to {MAX_PASSWORD} bytes"),
        )
        .into());
    }
    let hashed = tokio::task::spawn_blocking(move || passwords::hash(&password))
        .await
        .map_err(|e| Status::internal(format!("the password hash failed: {e}")))?;
    hashed.map(Some).map_err(|e| {
        tracing::error!(error = %e, "cannot hash a password");
        Status::internal("cannot hash the password now")
    })
}

#[tonic::async_trait]
impl AdminService for AdminServer {
    async fn add_user(
        &self,
        request: Request<pb::AddUserRequest>,
    ) -> Result<Response<pb::AddUserResponse>, Status> {
        let actor = Actor::from(&self.admin(&request).await?);
        let pb::AddUserRequest {
            name,
            role,
            trusted,
            password,
        } = request.into_inner();
        let role = convert::user_role(role)?;
        users::check_name(&name)?;
        let hash = password_hash(password).await?;
        let user = self
            .store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let id = users::add_logged(
                    &tx,
                    &actor,
                    &name,
                    role,
                    hash.as_deref(),
                    trusted,
                    now_ms(),
                )?;
                let user = users::by_id(&tx, id)?;
                tx.commit()?;
                Ok(user)
            })
            .await?;
        tracing::info!(user = %user.name, role = user.role.as_str(), "user added");
        Ok(Response::new(pb::AddUserResponse {
            user: Some(user.into()),
        }))
    }

    async fn list_users(
        &self,
        request: Request<pb::ListUsersRequest>,
    ) -> Result<Response<pb::ListUsersResponse>, Status> {
        self.admin(&request).await?;
        let pb::ListUsersRequest {} = request.into_inner();
        let rows = self.reader.call(|conn| users::list(conn)).await?;
        Ok(Response::new(pb::ListUsersResponse {
            users: rows.into_iter().map(Into::into).collect(),
        }))
    }

    async fn set_user(
        &self,
        request: Request<pb::SetUserRequest>,
    ) -> Result<Response<pb::SetUserResponse>, Status> {
        let actor = Actor::from(&self.admin(&request).await?);
        let pb::SetUserRequest {
            name,
            role,
            trusted,
        } = request.into_inner();
        let role = convert::user_role(role)?;
        let user = self
            .store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                users::set_logged(&tx, &actor, &name, role, trusted, now_ms())?;
                let user = users::by_name(&tx, &name)?;
                tx.commit()?;
                Ok(user)
            })
            .await?;
        Ok(Response::new(pb::SetUserResponse {
            user: user.map(Into::into),
        }))
    }

    async fn list_events(
        &self,
        request: Request<pb::ListEventsRequest>,
    ) -> Result<Response<pb::ListEventsResponse>, Status> {
        let filter = EventFilter::try_from(request.into_inner())?;
        let rows = self
            .reader
            .call(move |conn| events::list(conn, &filter))
            .await?;
        Ok(Response::new(pb::ListEventsResponse {
            events: rows.into_iter().map(Into::into).collect(),
        }))
    }
}
