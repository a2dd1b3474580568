//! `user add|list|set`: the users of a served coordinator, straight on the
//! database file (no server needed). A password is read from standard input
//! (`--password-stdin`), never from the command line, and only its argon2id
//! hash is stored.

use std::io::BufRead;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use xq_coordinator::access::{UserRole, passwords};
use xq_coordinator::events::Actor;
use xq_coordinator::service::accounts::{Accounts, NewUser, UserChange};
use xq_coordinator::store::{Store, utc};
use xq_proto::outln;

/// `user …`.
#[derive(Debug, Args)]
pub struct UserArgs {
    /// SQLite database of the coordinator.
    #[arg(long, global = true, default_value = "xq.db")]
    db: PathBuf,
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

/// `, trusted` for a trusted user.
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
        let store = Store::open(&self.db)
            .with_context(|| format!("cannot open database {}", self.db.display()))?;
        let rt = tokio::runtime::Runtime::new().context("start the async runtime")?;
        let accounts = Accounts::new(store);
        match self.command {
            UserCommand::Add {
                name,
                role,
                trusted,
                password_stdin,
            } => {
                let hash = if password_stdin {
                    Some(passwords::hash(&password_from_stdin()?)?)
                } else {
                    None
                };
                let new = NewUser {
                    name: name.clone(),
                    role,
                    password_hash: hash,
                    trusted,
                };
                rt.block_on(accounts.add_user(Actor::cli(), new))
                    .with_context(|| format!("cannot add user {}", xq_proto::quote(&name)))?;
                eprintln!("{} {name:?} added", role.as_str());
            }
            UserCommand::List => {
                let rows = rt.block_on(accounts.users())?;
                outln!(
                    "{:<24} {:<10} {:<8} {:<9} created",
                    "name",
                    "role",
                    "trusted",
                    "password"
                )?;
                for u in rows {
                    outln!(
                        "{:<24} {:<10} {:<8} {:<9} {}",
                        u.name,
                        u.role.as_str(),
                        if u.trusted { "yes" } else { "no" },
                        if u.has_password { "set" } else { "-" },
                        utc(u.created_ms)
                    )?;
                }
            }
            UserCommand::Set {
                name,
                role,
                trusted,
            } => {
                let change = UserChange {
                    role: Some(role),
                    trusted: Some(trusted),
                };
                rt.block_on(accounts.set_user(Actor::cli(), name.clone(), change))
                    .with_context(|| format!("cannot change user {}", xq_proto::quote(&name)))?;
                eprintln!("user {name:?} is now {}", role.as_str());
            }
        }
        Ok(())
    }
}
