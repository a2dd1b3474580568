//! The administration service on the wire: the users (`AddUser`,
//! `ListUsers`, `SetUser`) and the event log (`ListEvents`, for any token).
//! The CLI's `user` and `events` call it remotely and, on a database file,
//! in their own process as the file's administrator
//! ([`crate::in_process`]); both ways reach the same handlers, and the
//! handlers the same service methods, which check who may.

use tonic::{Request, Response, Status};
use xq_proto::pb;
use xq_proto::pb::admin_service_server::AdminService;

use crate::access::passwords;
use crate::account_service::MAX_PASSWORD;
use crate::auth::caller;
use crate::convert;
use crate::events::{Actor, EventFilter};
use crate::service::accounts::{self, Accounts, NewUser, UserChange};
use crate::service::events::Events;

/// The administration service's state.
#[derive(Debug)]
pub struct AdminServer {
    /// User changes, each one transaction with its `user` event.
    accounts: Accounts,
    /// The same on a read connection, for lists.
    reader: Accounts,
    /// The event log, read.
    events: Events,
}

impl AdminServer {
    /// Changes through `accounts`, lists through `reader` and `events`.
    pub fn new(accounts: Accounts, reader: Accounts, events: Events) -> Self {
        AdminServer {
            accounts,
            reader,
            events,
        }
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
        let actor = Actor::from(&caller(&request)?);
        let pb::AddUserRequest {
            name,
            role,
            trusted,
            password,
        } = request.into_inner();
        let role = convert::user_role(role)?;
        accounts::check_user_name(&name)?;
        let password_hash = password_hash(password).await?;
        let new = NewUser {
            name: name.clone(),
            role,
            password_hash,
            trusted,
        };
        self.accounts.add_user(actor, new).await?;
        let user = self.accounts.user_named(name).await?;
        if let Some(user) = &user {
            tracing::info!(user = %user.name, role = user.role.as_str(), "user added");
        }
        Ok(Response::new(pb::AddUserResponse {
            user: user.map(Into::into),
        }))
    }

    async fn list_users(
        &self,
        request: Request<pb::ListUsersRequest>,
    ) -> Result<Response<pb::ListUsersResponse>, Status> {
        let actor = Actor::from(&caller(&request)?);
        let pb::ListUsersRequest {} = request.into_inner();
        let rows = self.reader.users_for(actor).await?;
        Ok(Response::new(pb::ListUsersResponse {
            users: rows.into_iter().map(Into::into).collect(),
        }))
    }

    async fn set_user(
        &self,
        request: Request<pb::SetUserRequest>,
    ) -> Result<Response<pb::SetUserResponse>, Status> {
        let actor = Actor::from(&caller(&request)?);
        let pb::SetUserRequest {
            name,
            role,
            trusted,
        } = request.into_inner();
        let change = UserChange {
            role: Some(convert::user_role(role)?),
            trusted: Some(trusted),
        };
        self.accounts.set_user(actor, name.clone(), change).await?;
        let user = self.accounts.user_named(name).await?;
        Ok(Response::new(pb::SetUserResponse {
            user: user.map(Into::into),
        }))
    }

    async fn list_events(
        &self,
        request: Request<pb::ListEventsRequest>,
    ) -> Result<Response<pb::ListEventsResponse>, Status> {
        let filter = EventFilter::try_from(request.into_inner())?;
        let rows = self.events.list(filter).await?;
        Ok(Response::new(pb::ListEventsResponse {
            events: rows.into_iter().map(Into::into).collect(),
        }))
    }
}
