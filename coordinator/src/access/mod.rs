//! Who may do what, as values: roles, the permission each gRPC method
//! needs, the caller a request carries, and token text and hashes. Pure
//! domain types below the store (which keeps tokens by [`tokens::TokenHash`]
//! and [`Role`]); checking requests against them is [`crate::auth`]'s.

pub mod passwords;
pub mod tokens;

use serde::{Deserialize, Serialize};

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Role {
    /// A machine's: plays leases and reads runs; the workers page shows
    /// whose machine it is by the token's user.
    Worker,
    /// A person's: acts as its user. Reads runs, manages runs within the
    /// user's [`UserRole`] (checked by the scheduler) and the user's own
    /// tokens; never plays leases.
    Personal,
}

impl Role {
    /// Every role.
    pub const ALL: [Role; 2] = [Role::Worker, Role::Personal];

    /// The stored and printed name: `worker` or `personal`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Worker => "worker",
            Role::Personal => "personal",
        }
    }

    /// Whether this role may do `p`.
    pub fn allows(self, p: Permission) -> bool {
        match (self, p) {
            (
                _,
                Permission::SignIn
                | Permission::Standard
                | Permission::ReadRuns
                | Permission::ReadRegistry,
            ) => true,
            (Role::Worker, Permission::Work) => true,
            (
                Role::Worker,
                Permission::ManageRuns
                | Permission::OwnTokens
                | Permission::Register
                | Permission::Administer,
            ) => false,
            (
                Role::Personal,
                Permission::ManageRuns
                | Permission::OwnTokens
                | Permission::Register
                | Permission::Administer,
            ) => true,
            (Role::Personal, Permission::Work) => false,
        }
    }
}

impl std::str::FromStr for Role {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown token role {} (worker or personal)",
                    xq_proto::quote(s)
                )
            })
    }
}

/// What a user may do: each role may do everything the one before may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum UserRole {
    /// Submits tests and manages their own.
    Developer,
    /// Also approves, changes and stops anyone's tests.
    Approver,
    /// Also manages users and the registry.
    Admin,
}

impl UserRole {
    /// Every role, weakest first.
    pub const ALL: [UserRole; 3] = [UserRole::Developer, UserRole::Approver, UserRole::Admin];

    /// The stored and printed name.
    pub fn as_str(self) -> &'static str {
        match self {
            UserRole::Developer => "developer",
            UserRole::Approver => "approver",
            UserRole::Admin => "admin",
        }
    }
}

impl std::str::FromStr for UserRole {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        UserRole::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown user role {} (developer, approver or admin)",
                    xq_proto::quote(s)
                )
            })
    }
}

/// Whether a caller acting as the user `actor` with `role` may change or
/// stop a run by `author`: approvers and admins any run, a developer only
/// their own. (A caller without a user, an ephemeral token of local mode
/// or the tests, is limited by its token's role alone.)
pub fn may_manage(role: UserRole, actor: u64, author: Option<u64>) -> bool {
    role >= UserRole::Approver || author == Some(actor)
}

/// Whether a new test by a user of `role` waits for approval: an
/// untrusted developer's does; approvers' and admins' start at once.
pub fn needs_approval(role: UserRole, trusted: bool) -> bool {
    role == UserRole::Developer && !trusted
}

/// Whether a caller acting as the user `actor` with `role` may approve or
/// reject a pending run by `author`: approvers and admins, never its author.
pub fn may_approve(role: UserRole, actor: u64, author: Option<u64>) -> bool {
    role >= UserRole::Approver && author != Some(actor)
}

/// Whether a caller acting as the user `actor` with `role` may revoke a
/// token of the user `owner`: their own, and an admin anyone's.
pub fn may_revoke(role: UserRole, actor: u64, owner: Option<u64>) -> bool {
    role == UserRole::Admin || owner == Some(actor)
}

/// What a method needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Nothing: signing in with a name and password (`Login`), the one
    /// method called without a token; limited per address and per name
    /// instead (`auth::sign_in`).
    SignIn,
    /// Nothing: the standard gRPC services, health checking
    /// (`grpc.health.v1.Health`) and server reflection (`v1` and `v1alpha`),
    /// which probes and tools such as `grpcurl` call without a token; limited
    /// per address instead ([`RateLimits::open`](crate::auth::RateLimits::open)).
    Standard,
    /// Register, lease, heartbeat, submit, release; download registered engines
    /// and report a signature mismatch.
    Work,
    /// List, get and watch runs.
    ReadRuns,
    /// Create, stop, resume, approve and reject runs, within the user's
    /// role.
    ManageRuns,
    /// Make, list and revoke the caller's own tokens (an admin user: anyone's).
    OwnTokens,
    /// Upload blobs and register engines and assets (a personal token of a
    /// user, any role; the names belong to that user).
    Register,
    /// List registered engines and assets, and download their blobs.
    ReadRegistry,
    /// Add, list and change users: a personal token whose user is an admin
    /// (the role is read from the store by the handler).
    Administer,
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
            | "DownloadBlob"
            | "ReportEngineMismatch"
            | "ReportBuildFailure"
            | "ReportEngineSpeed"
            | "GetWorkerRelease"
            | "ReportUpdateFailure",
        ) => Some(Permission::Work),
        ("xq.cluster.v1.RunService", "ListRuns" | "GetRun" | "WatchRun" | "ExportGames") => {
            Some(Permission::ReadRuns)
        }
        (
            "xq.cluster.v1.RunService",
            "CreateRun" | "StopRun" | "ApproveRun" | "RejectRun" | "ResumeRun" | "ModifyRun",
        ) => Some(Permission::ManageRuns),
        (
            "xq.cluster.v1.RegistryService",
            "UploadBlob" | "AddEngine" | "AddAsset" | "AddWorkerRelease",
        ) => Some(Permission::Register),
        (
            "xq.cluster.v1.RegistryService",
            "ListEngines" | "ListAssets" | "DownloadBlob" | "ListWorkerReleases",
        ) => Some(Permission::ReadRegistry),
        ("xq.cluster.v1.AdminService", "AddUser" | "ListUsers" | "SetUser") => {
            Some(Permission::Administer)
        }
        ("xq.cluster.v1.AdminService", "ListEvents") => Some(Permission::ReadRuns),
        ("xq.cluster.v1.AccountService", "Login") => Some(Permission::SignIn),
        ("grpc.health.v1.Health", "Check" | "Watch")
        | (
            "grpc.reflection.v1.ServerReflection" | "grpc.reflection.v1alpha.ServerReflection",
            "ServerReflectionInfo",
        ) => Some(Permission::Standard),
        ("xq.cluster.v1.AccountService", "CreateToken" | "ListTokens" | "RevokeToken") => {
            Some(Permission::OwnTokens)
        }
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
    /// The user the token belongs to (`users.id`); `None` for an ephemeral
    /// token without one. Only its id: the request path reads no more.
    pub user: Option<u64>,
}

impl Principal {
    /// The [`Principal::key`] of the command line working on its database
    /// file in its own process: stored tokens have keys from 1 up and
    /// ephemeral ones below 0, so no token over the network is ever this.
    const IN_PROCESS_KEY: i64 = 0;

    /// The database file's administrator: the command line, serving the
    /// core to itself over an in-memory channel (`crate::in_process`), the
    /// only place that makes one. It may do everything an admin may but
    /// work leases; its registrations and tokens belong to `user` (the
    /// command's `--user`, else `admin`), and it is logged as `cli`
    /// ([`crate::events::Actor::cli`]).
    pub(crate) fn in_process(user: Option<u64>) -> Principal {
        Principal {
            key: Self::IN_PROCESS_KEY,
            name: "cli".to_owned(),
            role: Role::Personal,
            user,
        }
    }

    /// Whether this is the database file's administrator
    /// ([`Principal::in_process`]), whom no network caller can be.
    pub fn is_in_process(&self) -> bool {
        self.key == Self::IN_PROCESS_KEY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_may_work_and_read_but_not_manage() {
        let p = |m| permission(m).unwrap();
        assert!(Role::Worker.allows(p("/xq.cluster.v1.WorkerService/SubmitResult")));
        assert!(Role::Worker.allows(p("/xq.cluster.v1.WorkerService/ReportBuildFailure")));
        assert!(Role::Worker.allows(p("/xq.cluster.v1.WorkerService/ReportEngineSpeed")));
        assert!(Role::Worker.allows(p("/xq.cluster.v1.RunService/WatchRun")));
        assert!(Role::Worker.allows(p("/xq.cluster.v1.RunService/ExportGames")));
        assert!(!Role::Worker.allows(p("/xq.cluster.v1.RunService/CreateRun")));
        assert!(!Role::Worker.allows(p("/xq.cluster.v1.RunService/StopRun")));
        assert!(!Role::Worker.allows(p("/xq.cluster.v1.AccountService/CreateToken")));
        assert!(!Role::Worker.allows(p("/xq.cluster.v1.RunService/ModifyRun")));
        assert!(!Role::Worker.allows(p("/xq.cluster.v1.RegistryService/UploadBlob")));
        assert!(!Role::Worker.allows(p("/xq.cluster.v1.RegistryService/AddEngine")));
        assert!(!Role::Worker.allows(p("/xq.cluster.v1.RegistryService/AddAsset")));
        assert!(Role::Worker.allows(p("/xq.cluster.v1.RegistryService/ListEngines")));
    }

    #[test]
    fn personal_tokens_manage_runs_and_tokens_but_never_work() {
        let p = |m| permission(m).unwrap();
        assert!(Role::Personal.allows(p("/xq.cluster.v1.RunService/StopRun")));
        assert!(Role::Personal.allows(p("/xq.cluster.v1.RunService/ModifyRun")));
        assert!(Role::Personal.allows(p("/xq.cluster.v1.RunService/ListRuns")));
        assert!(Role::Personal.allows(p("/xq.cluster.v1.AccountService/RevokeToken")));
        assert!(!Role::Personal.allows(p("/xq.cluster.v1.WorkerService/Register")));
        assert!(!Role::Personal.allows(p("/xq.cluster.v1.WorkerService/SubmitResult")));
        assert!(!Role::Personal.allows(p("/xq.cluster.v1.WorkerService/ReportBuildFailure")));
        assert!(!Role::Personal.allows(p("/xq.cluster.v1.WorkerService/DownloadBlob")));
        for m in [
            "UploadBlob",
            "AddEngine",
            "AddAsset",
            "ListAssets",
            "DownloadBlob",
        ] {
            let path = format!("/xq.cluster.v1.RegistryService/{m}");
            let needed = permission(&path).expect("a known method");
            assert!(Role::Personal.allows(needed), "{path}");
        }
        assert_eq!(
            permission("/xq.cluster.v1.RegistryService/DeleteEngine"),
            None
        );
        assert_eq!(
            permission("/xq.cluster.v1.AccountService/Login"),
            Some(Permission::SignIn)
        );
        assert_eq!("personal".parse(), Ok(Role::Personal));
        assert!("admin".parse::<Role>().is_err());
    }

    #[test]
    fn the_standard_services_alone_are_open_besides_login() {
        for path in [
            "/grpc.health.v1.Health/Check",
            "/grpc.health.v1.Health/Watch",
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        ] {
            assert_eq!(permission(path), Some(Permission::Standard), "{path}");
        }
        assert_eq!(permission("/grpc.health.v1.Health/Set"), None);
        assert_eq!(permission("/grpc.health.v2.Health/Check"), None);
    }

    #[test]
    fn developers_manage_their_own_runs_approvers_anyones() {
        assert!(may_manage(UserRole::Developer, 3, Some(3)));
        assert!(!may_manage(UserRole::Developer, 3, Some(4)));
        assert!(!may_manage(UserRole::Developer, 3, None));
        assert!(may_manage(UserRole::Approver, 3, Some(4)));
        assert!(may_manage(UserRole::Admin, 3, None));
    }

    #[test]
    fn untrusted_developers_wait_and_approvers_never_approve_their_own() {
        assert!(needs_approval(UserRole::Developer, false));
        assert!(!needs_approval(UserRole::Developer, true));
        assert!(!needs_approval(UserRole::Approver, false));
        assert!(may_approve(UserRole::Approver, 1, Some(2)));
        assert!(!may_approve(UserRole::Approver, 1, Some(1)));
        assert!(!may_approve(UserRole::Developer, 1, Some(2)));
        assert!(may_approve(UserRole::Admin, 1, None));
    }

    #[test]
    fn users_revoke_their_own_tokens_admins_anyones() {
        assert!(may_revoke(UserRole::Developer, 3, Some(3)));
        assert!(!may_revoke(UserRole::Approver, 3, Some(4)));
        assert!(!may_revoke(UserRole::Developer, 3, None));
        assert!(may_revoke(UserRole::Admin, 3, Some(4)));
    }

    #[test]
    fn only_personal_tokens_reach_the_administration() {
        for m in ["AddUser", "ListUsers", "SetUser"] {
            let path = format!("/xq.cluster.v1.AdminService/{m}");
            let needed = permission(&path);
            assert_eq!(needed, Some(Permission::Administer), "{path}");
            assert!(Role::Personal.allows(Permission::Administer));
            assert!(!Role::Worker.allows(Permission::Administer));
        }
        let events = permission("/xq.cluster.v1.AdminService/ListEvents").unwrap();
        assert!(Role::Worker.allows(events));
    }

    #[test]
    fn unknown_methods_need_an_unknown_permission() {
        assert_eq!(permission("/xq.cluster.v1.RunService/DropTables"), None);
        assert_eq!(permission("/grpc.health.v1.Health/Drop"), None);
        assert_eq!(permission("nonsense"), None);
    }
}
