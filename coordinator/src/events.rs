//! Who did what, as values: every create, approval, change, stop, resume,
//! worker exclusion, user change, token change and registration of an
//! engine, asset or worker release is an [`Event`] with its
//! time, actor, target and the change, written by the store in the same
//! transaction as the change itself (`store::events`), which the services
//! (`crate::service`) open.

use serde::Serialize;

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A run was created.
    Create,
    /// A pending run was approved.
    Approve,
    /// A pending run was rejected.
    Reject,
    /// A running test's cap, priority or share was changed.
    Modify,
    /// A run was stopped.
    Stop,
    /// A stopped run was resumed.
    Resume,
    /// A worker's results were set aside in a run.
    Exclude,
    /// A user was added or changed.
    User,
    /// A token was added or revoked.
    Token,
    /// An engine was registered.
    Engine,
    /// An asset was registered.
    Asset,
    /// A worker release was registered, or made required.
    WorkerRelease,
}

impl EventKind {
    /// Every kind, in the order filters list them.
    pub const ALL: [EventKind; 12] = [
        EventKind::Create,
        EventKind::Approve,
        EventKind::Reject,
        EventKind::Modify,
        EventKind::Stop,
        EventKind::Resume,
        EventKind::Exclude,
        EventKind::User,
        EventKind::Token,
        EventKind::Engine,
        EventKind::Asset,
        EventKind::WorkerRelease,
    ];

    /// The stored and printed name.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Create => "create",
            EventKind::Approve => "approve",
            EventKind::Reject => "reject",
            EventKind::Modify => "modify",
            EventKind::Stop => "stop",
            EventKind::Resume => "resume",
            EventKind::Exclude => "exclude",
            EventKind::User => "user",
            EventKind::Token => "token",
            EventKind::Engine => "engine",
            EventKind::Asset => "asset",
            EventKind::WorkerRelease => "worker_release",
        }
    }

    /// The kind named by [`EventKind::as_str`]'s text.
    pub fn parse(s: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// Who made a change: a user, a token without a user, the command line on
/// the database file, or the coordinator itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// `users.id`, when the change was made as a user: the log names them
    /// by that user's name.
    pub user: Option<u64>,
    /// How the log names them without a user: the token's name, `cli` or
    /// `system`.
    pub name: String,
    /// The command line on the database file, in its own process
    /// ([`Actor::cli`]): the administrator. Only [`Actor::cli`] sets it,
    /// and no caller from the network becomes it (a token named `cli` is
    /// [`Actor::token`]).
    local: bool,
    /// With `local`: the user the command line acts for (`--user NAME`, or
    /// the file's administrator), who owns what it makes; the log still
    /// names `cli`.
    acting_for: Option<u64>,
}

impl Actor {
    /// The coordinator itself (a worker excluded by a run's rule).
    pub fn system() -> Actor {
        Actor::token("system")
    }

    /// The user `id` named `name` (a signed-in visitor of the web view).
    pub fn user(id: u64, name: &str) -> Actor {
        Actor {
            user: Some(id),
            name: name.to_owned(),
            local: false,
            acting_for: None,
        }
    }

    /// The command line working on the database file (whoever can reach
    /// the file is the coordinator's administrator).
    pub fn cli() -> Actor {
        Actor {
            user: None,
            name: "cli".to_owned(),
            local: true,
            acting_for: None,
        }
    }

    /// [`Actor::cli`] acting for the user `owner`, who owns what it makes.
    pub fn cli_for(owner: Option<u64>) -> Actor {
        Actor {
            acting_for: owner,
            ..Actor::cli()
        }
    }

    /// The user who owns what this actor makes: its user, or the one the
    /// command line acts for.
    pub fn owner(&self) -> Option<u64> {
        self.user.or(self.acting_for)
    }

    /// A token without a user, logged under its name (local mode's, a
    /// token from before users).
    pub fn token(name: &str) -> Actor {
        Actor {
            user: None,
            name: name.to_owned(),
            local: false,
            acting_for: None,
        }
    }

    /// Whether this is the command line on the database file
    /// ([`Actor::cli`]), which acts as the administrator.
    pub fn is_local_admin(&self) -> bool {
        self.local
    }
}

impl From<&crate::access::Principal> for Actor {
    /// The caller's user; the log names them by the user's name (the store
    /// looks it up as it writes), else by the token's. The database file's
    /// administrator in the command line's own process is [`Actor::cli`].
    fn from(p: &crate::access::Principal) -> Actor {
        if p.is_in_process() {
            return Actor::cli_for(p.user);
        }
        Actor {
            user: p.user,
            name: p.name.clone(),
            local: false,
            acting_for: None,
        }
    }
}

/// One logged change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    pub id: u64,
    /// Unix ms.
    pub time_ms: i64,
    /// [`Actor::name`].
    pub actor: String,
    pub kind: EventKind,
    /// The run it concerns, if any.
    pub run: Option<u64>,
    /// What changed, in words (`max games 0 → 400`, `token box1 (worker)`).
    pub detail: String,
}

/// Which events to list; `None` fields match everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventFilter {
    pub actor: Option<String>,
    pub run: Option<u64>,
    pub kind: Option<EventKind>,
    /// At most this many, newest first.
    pub limit: u32,
}
