//! `user add|list|set`: the users of a coordinator, on its database file
//! (no server needed) or at a served coordinator (`--coordinator`, an
//! admin's token), through the administration service either way. A
//! password is read from standard input (`--password-stdin`), never from
//! the command line, and only its argon2id hash is stored.

use std::io::BufRead;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use xq_coordinator::access::UserRole;
use xq_coordinator::in_process::Acting;
use xq_coordinator::store::utc;
use xq_proto::{outln, pb};

use super::registry::Place;

/// `user …`.
#[derive(Debug, Args)]
pub struct UserArgs {
    /// SQLite database of the coordinator (default xq.db): work on it as
    /// its administrator (no server needed; the first admin is added so).
    #[arg(long, global = true)]
    db: Option<PathBuf>,
    /// Work on the users at this coordinator instead, as the user of the
    /// personal token (`--token`, else the one `login` stored), who must
    /// be an admin.
    #[arg(long, global = true, conflicts_with = "db")]
    coordinator: Option<String>,
    /// With `--coordinator`: the personal token to send.
    #[arg(long, global = true, env = "XQ_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// With `--coordinator`: PEM file of the CA that signed its TLS certificate.
    #[arg(long, global = true)]
    ca: Option<PathBuf>,
    #[command(subcommand)]
    command: UserCommand,
}

#[derive(Debug, Subcommand)]
enum UserCommand {
    /// Add a user: `developer` (submits tests, manages their own),
    /// `approver` (also approves, changes and stops anyone's) or `admin`
    /// (also manages users and the registry).
    Add {
        name: String,
        #[arg(long)]
        role: UserRole,
        /// Their tests start without approval (approvers' and admins' always do).
        #[arg(long)]
        trusted: bool,
        /// Read the password from the first line of standard input; without
        /// it the user has no password and cannot sign in.
        #[arg(long)]
        password_stdin: bool,
    },
    /// List users: name, role, trusted, password set, created.
    List,
    /// Change a user's role and trust.
    Set {
        name: String,
        #[arg(long)]
        role: UserRole,
        #[arg(long)]
        trusted: bool,
    },
}

/// The first line of standard input, without its line end.
pub fn password_from_stdin() -> anyhow::Result<String> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("cannot read the password from standard input")?;
    let password = line.trim_end_matches(['\r', '\n']).to_owned();
    if password.is_empty() {
        bail!("no password on standard input");
    }
    Ok(password)
}

impl UserArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let place = Place::file_unless_coordinator(self.db, self.coordinator, self.token, self.ca);
        let coordinator = place.connect(Acting::Administrator)?;
        let mut users = coordinator.users();
        match self.command {
            UserCommand::Add {
                name,
                role,
                trusted,
                password_stdin,
            } => {
                let password = if password_stdin {
                    password_from_stdin()?
                } else {
                    String::new()
                };
                coordinator
                    .block_on(users.add_user(pb::AddUserRequest {
                        name: name.clone(),
                        role: pb::UserRole::from(role).into(),
                        trusted,
                        password,
                    }))
                    .with_context(|| format!("cannot add user {}", xq_proto::quote(&name)))?;
                eprintln!("{} {name:?} added", role.as_str());
            }
            UserCommand::List => {
                let rows = coordinator
                    .block_on(users.list_users(pb::ListUsersRequest {}))
                    .context("cannot list users")?
                    .into_inner()
                    .users;
                outln!(
                    "{:<24} {:<10} {:<8} {:<9} created",
                    "name",
                    "role",
                    "trusted",
                    "password"
                )?;
                for u in rows {
                    let role = UserRole::try_from(u.role())?;
                    outln!(
                        "{:<24} {:<10} {:<8} {:<9} {}",
                        u.name,
                        role.as_str(),
                        if u.trusted { "yes" } else { "no" },
                        if u.has_password { "set" } else { "-" },
                        utc(u.created_unix_ms)
                    )?;
                }
            }
            UserCommand::Set {
                name,
                role,
                trusted,
            } => {
                coordinator
                    .block_on(users.set_user(pb::SetUserRequest {
                        name: name.clone(),
                        role: pb::UserRole::from(role).into(),
                        trusted,
                    }))
                    .with_context(|| format!("cannot change user {}", xq_proto::quote(&name)))?;
                eprintln!("user {name:?} is now {}", role.as_str());
            }
        }
        Ok(())
    }
}
