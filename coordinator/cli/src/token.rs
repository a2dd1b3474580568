//! `token add|list|revoke`: access tokens. On the database file (`--db`, no
//! server needed; a running server sees the change on its next call) they
//! are the administrator's tool, for any user's tokens; with
//! `--coordinator` they are a user's own, through the account service and
//! the caller's personal token.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, Subcommand, ValueEnum};
use xq_coordinator::auth::Role;
use xq_coordinator::auth::tokens;
use xq_coordinator::events::Actor;
use xq_coordinator::store::{Store, now_ms, tokens as token_rows, users, utc};
use xq_proto::{outln, pb};

use super::remote::Remote;

/// `token …`.
#[derive(Debug, Args)]
pub struct TokenArgs {
    /// SQLite database of the coordinator.
    #[arg(long, global = true, default_value = "xq.db")]
    db: PathBuf,
    /// Work on your own tokens at this coordinator instead of the database
    /// file, as the user of the personal token (`--token`, else the one
    /// `login` stored).
    #[arg(long, global = true, conflicts_with = "db")]
    coordinator: Option<String>,
    /// With `--coordinator`: the personal token to send.
    #[arg(long, global = true, env = "XQ_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// With `--coordinator`: PEM file of the CA that signed its TLS certificate.
    #[arg(long, global = true)]
    ca: Option<PathBuf>,
    #[command(subcommand)]
    command: TokenCommand,
}

/// A token role as `--role` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    Worker,
    Personal,
    /// The old name of `personal`, accepted with a note.
    #[value(hide = true)]
    Admin,
}

impl RoleArg {
    /// The role; `admin` becomes `personal`, with a note on standard error.
    pub fn role(self) -> Role {
        match self {
            RoleArg::Worker => Role::Worker,
            RoleArg::Personal => Role::Personal,
            RoleArg::Admin => {
                eprintln!("note: the token role `admin` is now called `personal`");
                Role::Personal
            }
        }
    }
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// Make a token and print it once (only its hash is stored).
    Add {
        /// `worker` (a machine's: plays leases, reads runs) or `personal` (a
        /// person's: acts as its user, manages runs within the user's role;
        /// `admin`, its old name, is still accepted).
        #[arg(long, value_enum)]
        role: RoleArg,
        /// A unique name, e.g. the host or person it is for.
        name: String,
        /// The user the token belongs to (`user add`); by default the user
        /// `admin`, made (role admin, no password) if there is none yet.
        /// Only on the database file: remotely a token is always yours.
        #[arg(long)]
        user: Option<String>,
    },
    /// List tokens: name, role, user, created, revoked (never the token).
    /// Remotely your own.
    List {
        /// Remotely: every user's tokens (admins only).
        #[arg(long)]
        all: bool,
    },
    /// Revoke a token by name; it stops working at the next call. Remotely
    /// your own (an admin: anyone's).
    Revoke { name: String },
}

impl TokenArgs {
    pub fn run(self) -> anyhow::Result<()> {
        match self.coordinator.clone() {
            Some(url) => self.run_remote(url),
            None => self.run_on_file(),
        }
    }

    fn run_on_file(self) -> anyhow::Result<()> {
        let store = Store::open(&self.db)
            .with_context(|| format!("cannot open database {}", self.db.display()))?;
        let rt = tokio::runtime::Runtime::new().context("start the async runtime")?;
        match self.command {
            TokenCommand::Add { role, name, user } => {
                let role = role.role();
                let token = tokens::generate()?;
                let hash = tokens::hash(&token);
                let stored = name.clone();
                rt.block_on(store.call(move |conn| {
                    let tx = conn.savepoint()?;
                    let owner = users::named_or_admin(&tx, user.as_deref(), now_ms())?;
                    token_rows::add(&tx, &Actor::cli(), &stored, role, owner, &hash, now_ms())?;
                    tx.commit()?;
                    Ok(())
                }))
                .with_context(|| format!("cannot add token {name:?}"))?;
                outln!("{token}")?;
                eprintln!(
                    "{} token {name:?} added; it is shown only now, store it safely",
                    role.as_str()
                );
            }
            TokenCommand::List { all: _ } => {
                let rows = rt.block_on(store.call(|conn| token_rows::list(conn)))?;
                print_table(rows.into_iter().map(|t| Line {
                    name: t.name,
                    role: t.role.as_str(),
                    user: t.user.unwrap_or_default(),
                    created_ms: t.created_ms,
                    revoked_ms: t.revoked_ms,
                }))?;
            }
            TokenCommand::Revoke { name } => {
                let stored = name.clone();
                let revoked = rt
                    .block_on(store.call(move |conn| {
                        let tx = conn.savepoint()?;
                        let revoked = token_rows::revoke_as(&tx, &Actor::cli(), &stored, now_ms())?;
                        tx.commit()?;
                        Ok(revoked)
                    }))
                    .with_context(|| format!("cannot revoke token {name:?}"))?;
                said_revoked(&name, revoked);
            }
        }
        Ok(())
    }

    fn run_remote(self, url: String) -> anyhow::Result<()> {
        let remote = Remote::with_ca(url, self.token.clone(), self.ca.clone());
        let rt = tokio::runtime::Runtime::new().context("start the async runtime")?;
        let (mut client, target) = {
            let _entered = rt.enter();
            remote.accounts()?
        };
        if target.token.is_none() {
            bail!(
                "no token for {}: give --token, or sign in with `xq-coordinator login --coordinator {}`",
                target.url,
                target.url
            );
        }
        match self.command {
            TokenCommand::Add { role, name, user } => {
                if user.is_some() {
                    bail!(
                        "--user works only on the database file; remotely a token is always yours"
                    );
                }
                let role = role.role();
                let answer = rt
                    .block_on(client.create_token(pb::CreateTokenRequest {
                        name: name.clone(),
                        role: pb::TokenRole::from(role).into(),
                    }))
                    .with_context(|| format!("cannot add token {}", xq_proto::quote(&name)))?
                    .into_inner();
                outln!("{}", answer.token)?;
                eprintln!(
                    "{} token {name:?} added; it is shown only now, store it safely",
                    role.as_str()
                );
            }
            TokenCommand::List { all } => {
                let rows = rt
                    .block_on(client.list_tokens(pb::ListTokensRequest { all_users: all }))
                    .context("cannot list tokens")?
                    .into_inner()
                    .tokens;
                print_table(rows.into_iter().map(|t| Line {
                    role: match t.role() {
                        pb::TokenRole::Worker => Role::Worker.as_str(),
                        pb::TokenRole::Personal => Role::Personal.as_str(),
                        pb::TokenRole::Unspecified => "?",
                    },
                    name: t.name,
                    user: t.user,
                    created_ms: t.created_unix_ms,
                    revoked_ms: (t.revoked_unix_ms != 0).then_some(t.revoked_unix_ms),
                }))?;
            }
            TokenCommand::Revoke { name } => {
                let revoked = rt
                    .block_on(client.revoke_token(pb::RevokeTokenRequest { name: name.clone() }))
                    .with_context(|| format!("cannot revoke token {}", xq_proto::quote(&name)))?
                    .into_inner()
                    .revoked;
                said_revoked(&name, revoked);
            }
        }
        Ok(())
    }
}

/// One token as `token list` prints it.
struct Line {
    name: String,
    role: &'static str,
    user: String,
    created_ms: i64,
    revoked_ms: Option<i64>,
}

fn print_table(lines: impl Iterator<Item = Line>) -> anyhow::Result<()> {
    outln!(
        "{:<24} {:<8} {:<16} {:<20} revoked",
        "name",
        "role",
        "user",
        "created"
    )?;
    for t in lines {
        outln!(
            "{:<24} {:<8} {:<16} {:<20} {}",
            t.name,
            t.role,
            if t.user.is_empty() { "-" } else { &t.user },
            utc(t.created_ms),
            t.revoked_ms.map_or_else(|| "-".to_owned(), utc)
        )?;
    }
    Ok(())
}

fn said_revoked(name: &str, revoked: bool) {
    if revoked {
        eprintln!("token {name:?} revoked");
    } else {
        eprintln!("token {name:?} was revoked already");
    }
}
