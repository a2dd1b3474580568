//! `user add|list|set`: the users of a coordinator, on its database file
//! (no server needed) or at a served coordinator (`--coordinator`, an
//! admin's token), through the administration service either way. A
//! password is read from standard input (`--password-stdin`), never from
//! the command line, and only its argon2id hash is stored.

use std::io::BufRead;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use xq_coordinator::access::UserRole;
use xq_coordinator::in_process::Acting;
use xq_coordinator::service::utc;
use xq_proto::{outln, pb};

use super::registry::FileOrCoordinator;

/// `user …`.
#[derive(Debug, Args)]
pub struct UserArgs {
    #[command(flatten)]
    place: FileOrCoordinator,
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
        let place = self.place.place();
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
