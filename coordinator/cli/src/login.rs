//! `login` and `logout`: sign in to a served coordinator with a user's name
//! and password, which makes a personal token, and keep it in the
//! credentials file ([`super::credentials`]) for every remote command; or
//! revoke it and forget it.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use tonic::Code;
use xq_proto::pb;

use super::credentials::{self, Login};
use super::remote::{DEFAULT_COORDINATOR, accounts_client, stored};
use super::user::password_from_stdin;

/// `login`.
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// Coordinator address (`https://…` with TLS).
    #[arg(long, default_value = DEFAULT_COORDINATOR)]
    coordinator: String,
    /// Your user name.
    #[arg(long)]
    user: String,
    /// Read the password from the first line of standard input instead of
    /// asking on the terminal (for scripts).
    #[arg(long)]
    password_stdin: bool,
    /// The new token's name (unique on the coordinator); default
    /// `USER-login-` and 8 random hex digits.
    #[arg(long)]
    token_name: Option<String>,
    /// PEM file of the CA that signed the coordinator's TLS certificate.
    #[arg(long)]
    ca: Option<PathBuf>,
}

/// `logout`.
#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// The coordinator to sign out of; default: the newest login's.
    #[arg(long)]
    coordinator: Option<String>,
    /// PEM file of the CA that signed the coordinator's TLS certificate.
    #[arg(long)]
    ca: Option<PathBuf>,
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Runtime::new().context("start the async runtime")
}

impl LoginArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let file = credentials::path()?;
        let mut logins = credentials::load(&file)?;
        let url = credentials::key(&self.coordinator).to_owned();
        let password = if self.password_stdin {
            password_from_stdin()?
        } else {
            rpassword::prompt_password(format!("password for {} at {url}: ", self.user))
                .context("cannot read the password from the terminal (use --password-stdin)")?
        };
        let rt = runtime()?;
        let mut client = {
            let _entered = rt.enter();
            accounts_client(&url, None, self.ca.as_deref())?
        };
        let answer = rt
            .block_on(client.login(pb::LoginRequest {
                user: self.user.clone(),
                password,
                token_name: self.token_name.unwrap_or_default(),
            }))
            .with_context(|| format!("cannot sign in to {url}"))?
            .into_inner();
        let role = answer
            .user_role()
            .as_str_name()
            .trim_start_matches("USER_ROLE_")
            .to_ascii_lowercase();
        let info = answer.info.context("the coordinator sent no token name")?;
        let old = logins.insert(Login {
            coordinator: url.clone(),
            user: self.user.clone(),
            token_name: info.name.clone(),
            token: answer.token,
        });
        credentials::save(&file, &logins)?;
        eprintln!(
            "signed in to {url} as {} ({}); personal token {:?} stored in {}",
            self.user,
            role,
            info.name,
            file.display()
        );
        if let Some(old) = old {
            // The replaced login's token is revoked with itself, so it does
            // not linger unused; a failure leaves it to `token revoke`.
            let revoked = rt.block_on(async {
                let mut client = accounts_client(&url, Some(&old.token), self.ca.as_deref())?;
                client
                    .revoke_token(pb::RevokeTokenRequest {
                        name: old.token_name.clone(),
                    })
                    .await?;
                anyhow::Ok(())
            });
            match revoked {
                Ok(()) => eprintln!("the previous login's token {:?} is revoked", old.token_name),
                Err(e) => eprintln!(
                    "note: the previous login's token {:?} was not revoked ({e:#}); `token revoke` it",
                    old.token_name
                ),
            }
        }
        Ok(())
    }
}

impl LogoutArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let file = credentials::path()?;
        let mut logins = stored()?;
        let login = match &self.coordinator {
            Some(url) => logins.for_coordinator(url),
            None => logins.newest(),
        }
        .cloned();
        let Some(login) = login else {
            bail!(
                "not signed in to {}",
                self.coordinator.as_deref().unwrap_or("any coordinator")
            );
        };
        let rt = runtime()?;
        let answer = rt.block_on(async {
            let mut client =
                accounts_client(&login.coordinator, Some(&login.token), self.ca.as_deref())?;
            let answer = client
                .revoke_token(pb::RevokeTokenRequest {
                    name: login.token_name.clone(),
                })
                .await;
            anyhow::Ok(answer)
        })?;
        match answer {
            Ok(_) => {}
            // Revoked already (or the coordinator's database was replaced):
            // the token works nowhere, so it is only forgotten.
            Err(status) if status.code() == Code::Unauthenticated => {}
            Err(status) => {
                return Err(status).with_context(|| {
                    format!(
                        "cannot revoke the token at {}; still signed in (retry)",
                        login.coordinator
                    )
                });
            }
        }
        logins.remove(&login.coordinator);
        credentials::save(&file, &logins)?;
        eprintln!(
            "signed out of {}; token {:?} revoked",
            login.coordinator, login.token_name
        );
        Ok(())
    }
}
