//! `token add|list|revoke`: access tokens. On the database file (`--db`, no
//! server needed; a running server sees the change on its next call) they
//! are the administrator's tool, for any user's tokens; with
//! `--coordinator` they are a user's own, through the account service and
//! the caller's personal token.

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use xq_coordinator::auth::Role;
use xq_coordinator::in_process::Acting;
use xq_coordinator::service::utc;
use xq_proto::{outln, pb};

use super::registry::FileOrCoordinator;

/// `token …`.
#[derive(Debug, Args)]
pub struct TokenArgs {
    #[command(flatten)]
    place: FileOrCoordinator,
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
        let place = self.place.place();
        let acting = match &self.command {
            TokenCommand::Add { user, .. } => Acting::For(user.clone()),
            TokenCommand::List { .. } | TokenCommand::Revoke { .. } => Acting::Administrator,
        };
        let coordinator = place.connect(acting)?;
        let mut client = coordinator.accounts();
        match self.command {
            TokenCommand::Add {
                role,
                name,
                user: _,
            } => {
                let role = role.role();
                let answer = coordinator
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
                let rows = coordinator
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
                let revoked = coordinator
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
