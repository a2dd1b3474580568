//! `token add|list|revoke`: access tokens, straight on the database file
//! (no server needed; a running server sees the change on its next call).

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use xq_coordinator::access::UserRole;
use xq_coordinator::auth::Role;
use xq_coordinator::auth::tokens;
use xq_coordinator::events::Actor;
use xq_coordinator::store::{Store, StoreError, now_ms, tokens as token_rows, users, utc};
use xq_proto::outln;

/// `token …`.
#[derive(Debug, Args)]
pub struct TokenArgs {
    /// SQLite database of the coordinator.
    #[arg(long, global = true, default_value = "xq.db")]
    db: PathBuf,
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
        #[arg(long)]
        user: Option<String>,
    },
    /// List tokens: name, role, user, created, revoked (never the token).
    List,
    /// Revoke a token by name; it stops working at the next call.
    Revoke { name: String },
}

impl TokenArgs {
    pub fn run(self) -> anyhow::Result<()> {
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
                    let tx = conn.transaction()?;
                    let owner = match user {
                        Some(user) => {
                            users::by_name(&tx, &user)?
                                .ok_or_else(|| {
                                    StoreError::NotFound(format!(
                                        "no user named {} (add one with `user add`)",
                                        xq_proto::quote(&user)
                                    ))
                                })?
                                .id
                        }
                        None => {
                            users::ensure(&tx, users::DEFAULT_ADMIN, UserRole::Admin, now_ms())?
                        }
                    };
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
            TokenCommand::List => {
                let rows = rt.block_on(store.call(|conn| token_rows::list(conn)))?;
                outln!(
                    "{:<24} {:<8} {:<16} {:<20} revoked",
                    "name",
                    "role",
                    "user",
                    "created"
                )?;
                for t in rows {
                    outln!(
                        "{:<24} {:<8} {:<16} {:<20} {}",
                        t.name,
                        t.role.as_str(),
                        t.user.as_deref().unwrap_or("-"),
                        utc(t.created_ms),
                        t.revoked_ms.map_or_else(|| "-".to_owned(), utc)
                    )?;
                }
            }
            TokenCommand::Revoke { name } => {
                let stored = name.clone();
                let revoked = rt
                    .block_on(store.call(move |conn| {
                        let tx = conn.transaction()?;
                        let revoked = token_rows::revoke_as(&tx, &Actor::cli(), &stored, now_ms())?;
                        tx.commit()?;
                        Ok(revoked)
                    }))
                    .with_context(|| format!("cannot revoke token {name:?}"))?;
                if revoked {
                    eprintln!("token {name:?} revoked");
                } else {
                    eprintln!("token {name:?} was revoked already");
                }
            }
        }
        Ok(())
    }
}
