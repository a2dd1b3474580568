//! The account service on the wire: `Login`, the one call without a token
//! (a name and password, within the sign-in limits of
//! [`crate::auth::sign_in`], keyed on the peer's address), which makes a
//! personal token; and a user's own tokens, `CreateToken`, `ListTokens` and
//! `RevokeToken`, for a personal token that belongs to a user.

use std::net::{IpAddr, Ipv6Addr};
use std::sync::Arc;

use tonic::{Request, Response, Status};
use xq_proto::pb;
use xq_proto::pb::account_service_server::AccountService;

use crate::accounts::Accounts;
use crate::auth::sign_in::SignInError;
use crate::auth::{Authenticator, Principal, Role, caller, tokens};
use crate::events::Actor;
use crate::store::{Store, now_ms, tokens as token_rows, users};

/// Longest password `Login` takes, in bytes.
pub const MAX_PASSWORD: usize = 1024;

/// The account service's state: the authenticator (sign-in and its limits)
/// and the write store's token changes.
#[derive(Debug)]
pub struct AccountServer {
    auth: Arc<Authenticator>,
    accounts: Accounts,
    /// The write store, for the in-process administrator's token list and
    /// revocations (anyone's, as on the database file).
    store: Store,
}

impl AccountServer {
    pub fn new(auth: Arc<Authenticator>, accounts: Accounts, store: Store) -> Self {
        AccountServer {
            auth,
            accounts,
            store,
        }
    }
}

fn bad(field: &str, reason: impl std::fmt::Display) -> Status {
    xq_proto::Invalid::new(field, reason).into()
}

/// The user a caller's token belongs to; a token without one (local
/// mode's, the tests') may not manage tokens.
fn user_of(principal: &Principal) -> Result<u64, Status> {
    principal.user.ok_or_else(|| {
        Status::permission_denied(format!(
            "token {} belongs to no user; sign in with `xq-coordinator login`",
            xq_proto::quote(&principal.name)
        ))
    })
}

/// A new token's text, or INTERNAL if the OS random source failed.
fn new_token() -> Result<String, Status> {
    tokens::generate().map_err(|e| {
        tracing::error!(error = %e, "cannot make a token");
        Status::internal("cannot make a token now")
    })
}

impl From<SignInError> for Status {
    fn from(e: SignInError) -> Self {
        match e {
            SignInError::Wrong => Status::unauthenticated(e.to_string()),
            SignInError::Limited { .. } => Status::resource_exhausted(e.to_string()),
            SignInError::Store(e) => e.into(),
        }
    }
}

#[tonic::async_trait]
impl AccountService for AccountServer {
    async fn login(
        &self,
        request: Request<pb::LoginRequest>,
    ) -> Result<Response<pb::LoginResponse>, Status> {
        let from = request
            .remote_addr()
            .map_or(IpAddr::V6(Ipv6Addr::UNSPECIFIED), |a| a.ip());
        let pb::LoginRequest {
            user,
            password,
            token_name,
        } = request.into_inner();
        if user.is_empty() || user.len() > users::MAX_NAME {
            return Err(bad(
                "user",
                format!(
                    "{} must be 1 to {} bytes",
                    xq_proto::quote(&user),
                    users::MAX_NAME
                ),
            ));
        }
        if password.is_empty() || password.len() > MAX_PASSWORD {
            return Err(bad(
                "password",
                format!("must be 1 to {MAX_PASSWORD} bytes"),
            ));
        }
        let name = if token_name.is_empty() {
            format!(
                "{user}-login-{}",
                &new_token()?[tokens::PREFIX.len()..][..8]
            )
        } else {
            token_name
        };
        token_rows::check_name(&name)?;
        let signed = match self.auth.sign_in(&user, &password, from).await {
            Ok(signed) => signed,
            Err(e) => {
                tracing::warn!(user = %xq_proto::quote(&user), %from, error = %e, "sign-in refused");
                return Err(e.into());
            }
        };
        let token = new_token()?;
        let actor = Actor {
            user: Some(signed.id),
            name: signed.name.clone(),
        };
        let row = self
            .accounts
            .create(actor, signed.id, name, Role::Personal, tokens::hash(&token))
            .await?;
        tracing::info!(user = %signed.name, token = %row.name, %from, "signed in");
        Ok(Response::new(pb::LoginResponse {
            token,
            info: Some(row.into()),
            user_role: pb::UserRole::from(signed.role).into(),
        }))
    }

    async fn create_token(
        &self,
        request: Request<pb::CreateTokenRequest>,
    ) -> Result<Response<pb::CreateTokenResponse>, Status> {
        let principal = caller(&request)?;
        let user = user_of(&principal)?;
        let pb::CreateTokenRequest { name, role } = request.into_inner();
        let role = pb::TokenRole::try_from(role).unwrap_or(pb::TokenRole::Unspecified);
        let role = Role::try_from(role)?;
        token_rows::check_name(&name)?;
        let token = new_token()?;
        let row = self
            .accounts
            .create(
                Actor::from(&principal),
                user,
                name,
                role,
                tokens::hash(&token),
            )
            .await?;
        tracing::info!(token = %row.name, role = role.as_str(), by = %principal.name, "token made");
        Ok(Response::new(pb::CreateTokenResponse {
            token,
            info: Some(row.into()),
        }))
    }

    async fn list_tokens(
        &self,
        request: Request<pb::ListTokensRequest>,
    ) -> Result<Response<pb::ListTokensResponse>, Status> {
        let principal = caller(&request)?;
        let pb::ListTokensRequest { all_users } = request.into_inner();
        // The database file's administrator holds no token: it sees everyone's.
        let rows = if principal.is_in_process() {
            self.store.call(|conn| token_rows::list(conn)).await?
        } else {
            self.accounts.list(user_of(&principal)?, all_users).await?
        };
        Ok(Response::new(pb::ListTokensResponse {
            tokens: rows.into_iter().map(Into::into).collect(),
        }))
    }

    async fn revoke_token(
        &self,
        request: Request<pb::RevokeTokenRequest>,
    ) -> Result<Response<pb::RevokeTokenResponse>, Status> {
        let principal = caller(&request)?;
        let pb::RevokeTokenRequest { name } = request.into_inner();
        if name.is_empty() || name.len() > token_rows::MAX_NAME {
            return Err(bad(
                "name",
                format!(
                    "{} must be 1 to {} bytes",
                    xq_proto::quote(&name),
                    token_rows::MAX_NAME
                ),
            ));
        }
        let actor = Actor::from(&principal);
        // The database file's administrator revokes anyone's token.
        let revoked = if principal.is_in_process() {
            let stored = name.clone();
            self.store
                .call(move |conn| {
                    let tx = conn.savepoint()?;
                    let revoked = token_rows::revoke_as(&tx, &actor, &stored, now_ms())?;
                    tx.commit()?;
                    Ok(revoked)
                })
                .await?
        } else {
            self.accounts
                .revoke(actor, user_of(&principal)?, name.clone())
                .await?
        };
        tracing::info!(token = %name, by = %principal.name, revoked, "token revoked");
        Ok(Response::new(pb::RevokeTokenResponse { revoked }))
    }
}
