//! Who may call what: bearer tokens, roles and per-token rate limits.
//!
//! # Design
//!
//! * Every gRPC call carries `authorization: Bearer <token>`. A token is
//!   `xqt_` followed by 64 hex digits (32 random bytes). Only its SHA-256
//!   hash is stored (table `tokens`); a hash of a 256-bit random secret
//!   cannot be reversed or guessed, so no salt or slow hash is needed.
//! * Two roles. A **worker** token may call the `WorkerService` methods and
//!   read runs (List/Get/Watch, so a status page or a worker host can show
//!   progress without power). An **admin** token may do all of that and
//!   create and stop runs. [`permission`] maps each method to what it needs
//!   and [`Role::allows`] decides; a new method (e.g. adding engines) gets a
//!   line in [`permission`], and a method missing there is refused.
//! * [`layer::AuthLayer`] checks every call before any handler runs:
//!   UNAUTHENTICATED without a known, unrevoked token, PERMISSION_DENIED for
//!   a role that may not call the method, RESOURCE_EXHAUSTED past the
//!   token's rate ([`ratelimit`]). Stored tokens are looked up on every call
//!   (one indexed read on a separate read connection), so a revocation made
//!   with `xq-coordinator token revoke` by another process holds from the
//!   next call on.
//! * Ephemeral tokens ([`tokens::EphemeralToken`]) live only in the
//!   server's memory: local mode makes a random admin and worker token per
//!   run and never writes them anywhere.
//! * A worker id belongs to the token that registered it ([`owners`]):
//!   another token's calls with that worker id are PERMISSION_DENIED.

pub mod layer;
pub mod owners;
pub mod ratelimit;
pub mod tokens;

use serde::{Deserialize, Serialize};

pub use layer::{AuthLayer, Authenticator};
pub use ratelimit::{Rate, RateLimits};
pub use tokens::EphemeralToken;

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Role {
    /// Plays leases and reads runs.
    Worker,
    /// Everything a worker may, plus run administration.
    Admin,
}

impl Role {
    /// The stored and printed name: `worker` or `admin`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Worker => "worker",
            Role::Admin => "admin",
        }
    }

    /// Whether this role may do `p`.
    pub fn allows(self, p: Permission) -> bool {
        match (self, p) {
            (Role::Admin, _) => true,
            (Role::Worker, Permission::Work | Permission::ReadRuns) => true,
            (Role::Worker, Permission::ManageRuns) => false,
        }
    }
}

impl std::str::FromStr for Role {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "worker" => Ok(Role::Worker),
            "admin" => Ok(Role::Admin),
            _ => Err(format!("unknown role {s:?} (worker or admin)")),
        }
    }
}

/// What a method needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Register, lease, heartbeat, submit, release; download registered engines
    /// and report a signature mismatch.
    Work,
    /// List, get and watch runs.
    ReadRuns,
    /// Create and stop runs. (Engines are added on the database file, which only
    /// the administrator can reach.)
    ManageRuns,
}

/// The permission a gRPC method (`/package.Service/Method`) needs; `None`
/// for a method this table does not know, which is refused.
pub fn permission(path: &str) -> Option<Permission> {
    let (service, method) = path.strip_prefix('/')?.split_once('/')?;
    match (service, method) {
        (
            "xq.cluster.v1.WorkerService",
            "Register"
            | "RequestWork"
            | "Heartbeat"
            | "SubmitResult"
            | "ReleaseLease"
            | "DownloadEngine"
            | "ReportEngineMismatch",
        ) => Some(Permission::Work),
        ("xq.cluster.v1.RunService", "ListRuns" | "GetRun" | "WatchRun" | "ExportGames") => {
            Some(Permission::ReadRuns)
        }
        ("xq.cluster.v1.RunService", "CreateRun" | "StopRun") => Some(Permission::ManageRuns),
        _ => None,
    }
}

/// The caller of a request, as the auth layer found it; handlers read it
/// from the request's extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The token's identity: its row id (> 0) for stored tokens, a negative
    /// number for ephemeral ones. Rate limits and worker ownership key on it.
    pub key: i64,
    pub name: String,
    pub role: Role,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_may_work_and_read_but_not_manage() {
        let p = |m| permission(m).unwrap();
        assert!(Role::Worker.allows(p("/xq.cluster.v1.WorkerService/SubmitResult")));
        assert!(Role::Worker.allows(p("/xq.cluster.v1.RunService/WatchRun")));
        assert!(Role::Worker.allows(p("/xq.cluster.v1.RunService/ExportGames")));
        assert!(!Role::Worker.allows(p("/xq.cluster.v1.RunService/CreateRun")));
        assert!(!Role::Worker.allows(p("/xq.cluster.v1.RunService/StopRun")));
        assert!(Role::Admin.allows(p("/xq.cluster.v1.RunService/StopRun")));
        assert!(Role::Admin.allows(p("/xq.cluster.v1.WorkerService/Register")));
    }

    #[test]
    fn unknown_methods_need_an_unknown_permission() {
        assert_eq!(permission("/xq.cluster.v1.RunService/DropTables"), None);
        assert_eq!(permission("/grpc.health.v1.Health/Check"), None);
        assert_eq!(permission("nonsense"), None);
    }
}
