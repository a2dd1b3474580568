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

use crate::auth::sign_in::SignInError;
use crate::auth::{Authenticator, Role, caller, tokens};
use crate::events::Actor;
use crate::service::accounts::{self, Accounts};

/// Longest password `Login` takes, in bytes.
pub const MAX_PASSWORD: usize = 1024;

/// The account service's state: the authenticator (sign-in and its limits)
/// and the write store's token changes.
#[derive(Debug)]
pub struct AccountServer {
    auth: Arc<Authenticator>,
    accounts: Accounts,
}

impl AccountServer {
    pub fn new(auth: Arc<Authenticator>, accounts: Accounts) -> Self {
        AccountServer { auth, accounts }
    }
}

fn bad(field: &str, reason: impl std::fmt::Display) -> Status {
    xq_proto::Invalid::new(field, reason).into()
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
        if user.is_empty() || user.len() > accounts::MAX_USER_NAME {
            return Err(bad(
                "user",
                format!(
                    "{} must be 1 to {} bytes",
                    xq_proto::quote(&user),
                    accounts::MAX_USER_NAME
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
        accounts::check_token_name(&name)?;
        let signed = match self.auth.sign_in(&user, &password, from).await {
            Ok(signed) => signed,
            Err(e) => {
                tracing::warn!(user = %xq_proto::quote(&user), %from, error = %e, "sign-in refused");
                return Err(e.into());
            }
        };
        let token = new_token()?;
        let actor = Actor::user(signed.id, &signed.name);
        let row = self
            .accounts
            .create_token(actor, name, Role::Personal, tokens::hash(&token))
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
        let actor = Actor::from(&principal);
        let pb::CreateTokenRequest { name, role } = request.into_inner();
        let role = pb::TokenRole::try_from(role).unwrap_or(pb::TokenRole::Unspecified);
        let role = Role::try_from(role)?;
        let token = new_token()?;
        let row = self
            .accounts
            .create_token(actor, name, role, tokens::hash(&token))
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
        let actor = Actor::from(&caller(&request)?);
        let pb::ListTokensRequest { all_users } = request.into_inner();
        let rows = self.accounts.tokens(&actor, all_users).await?;
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
        if name.is_empty() || name.len() > accounts::MAX_TOKEN_NAME {
            return Err(bad(
                "name",
                format!(
                    "{} must be 1 to {} bytes",
                    xq_proto::quote(&name),
                    accounts::MAX_TOKEN_NAME
                ),
            ));
        }
        let revoked = self
            .accounts
            .revoke_token(Actor::from(&principal), name.clone())
            .await?;
        tracing::info!(token = %name, by = %principal.name, revoked, "token revoked");
        Ok(Response::new(pb::RevokeTokenResponse { revoked }))
    }
}
