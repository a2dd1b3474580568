//! Which coordinator a remote command talks to and which token it sends:
//! `--coordinator` and `--token` (or `XQ_TOKEN`) when given, else what
//! `login` stored (see [`resolve`] for the precedence).

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use xq_proto::connect::{Auth, channel};
use xq_proto::connect_failure::{ConnectFailure, Dialed};
use xq_proto::pb::account_service_client::AccountServiceClient;
use xq_proto::pb::registry_service_client::RegistryServiceClient;
use xq_proto::pb::run_service_client::RunServiceClient;

use super::credentials::{self, Credentials};
use super::display::Admin;

/// The coordinator a command talks to when neither `--coordinator` nor a
/// login names one.
pub const DEFAULT_COORDINATOR: &str = "http://127.0.0.1:50051";

/// An account-service client.
pub type Accounts = AccountServiceClient<InterceptedService<Channel, Auth>>;
/// A registry-service client.
pub type Registry = RegistryServiceClient<InterceptedService<Channel, Auth>>;

/// Where the coordinator is and who speaks to it.
#[derive(Debug, Clone, Args)]
pub struct Remote {
    /// Coordinator address (`https://…` with TLS); default: the one of the
    /// newest `login`, else http://127.0.0.1:50051.
    #[arg(long)]
    coordinator: Option<String>,
    /// Access token, sent as `authorization: Bearer <TOKEN>`; default: the
    /// personal token `login` stored for this coordinator.
    #[arg(long, env = "XQ_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// PEM file of the CA that signed the coordinator's TLS certificate
    /// (ca.pem from `xq-coordinator cert`); needs an https:// coordinator.
    #[arg(long)]
    ca: Option<PathBuf>,
}

/// A coordinator and the token to send it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub url: String,
    pub token: Option<String>,
}

/// The coordinator and token of a command given `coordinator` and `token`
/// (from the flags) and the stored logins: a given coordinator, else the
/// newest login's, else [`DEFAULT_COORDINATOR`]; a given token, else the
/// token stored for that coordinator (never one made by another), else none.
pub fn resolve(coordinator: Option<&str>, token: Option<&str>, stored: &Credentials) -> Target {
    let url = coordinator
        .map(str::to_owned)
        .or_else(|| stored.newest().map(|l| l.coordinator.clone()))
        .unwrap_or_else(|| DEFAULT_COORDINATOR.to_owned());
    let token = token
        .map(str::to_owned)
        .or_else(|| stored.for_coordinator(&url).map(|l| l.token.clone()));
    Target { url, token }
}

/// The stored logins; none when the environment names no configuration
/// directory.
pub fn stored() -> anyhow::Result<Credentials> {
    match credentials::path() {
        Ok(file) => credentials::load(&file),
        Err(_) => Ok(Credentials::default()),
    }
}

impl Remote {
    /// The coordinator at `url`, sending `token`, without TLS (local mode).
    pub fn new(url: String, token: Option<String>) -> Self {
        Remote::with_ca(url, token, None)
    }

    /// The coordinator at `url`, sending `token` (else the stored one),
    /// with TLS if `ca` names its CA's PEM file.
    pub fn with_ca(url: String, token: Option<String>, ca: Option<PathBuf>) -> Self {
        Remote {
            coordinator: Some(url),
            token,
            ca,
        }
    }

    /// The coordinator and token this command uses; the credentials file is
    /// read only when a flag is missing.
    pub fn target(&self) -> anyhow::Result<Target> {
        let stored = match (&self.coordinator, &self.token) {
            (Some(_), Some(_)) => Credentials::default(),
            _ => stored()?,
        };
        Ok(resolve(
            self.coordinator.as_deref(),
            self.token.as_deref(),
            &stored,
        ))
    }

    /// The CA file given with `--ca`.
    pub fn ca(&self) -> Option<&Path> {
        self.ca.as_deref()
    }

    /// Whether `--coordinator` or `--token` (or `XQ_TOKEN`) was given.
    pub fn given(&self) -> bool {
        self.coordinator.is_some() || self.token.is_some()
    }

    /// A runtime and a run-service client on it (the lazy channel must be
    /// made inside a runtime).
    pub fn connect(&self) -> anyhow::Result<(tokio::runtime::Runtime, Admin)> {
        let rt = tokio::runtime::Runtime::new().context("start the async runtime")?;
        let admin = {
            let _entered = rt.enter();
            self.admin()?
        };
        Ok((rt, admin))
    }

    /// A run-service client; must be made inside a runtime.
    pub fn admin(&self) -> anyhow::Result<Admin> {
        let target = self.target()?;
        admin_client(&target.url, target.token.as_deref(), self.ca())
    }

    /// A channel to the coordinator with the token to send on it, and the
    /// coordinator; must be made inside a runtime.
    pub fn channel(&self) -> anyhow::Result<((Channel, Auth), Target)> {
        let target = self.target()?;
        let channel = authed_channel(&target.url, target.token.as_deref(), self.ca())?;
        Ok((channel, target))
    }
}

/// The coordinator this process last made a channel to, for the messages of
/// [`explain`].
static DIALED: std::sync::Mutex<Option<Dialed>> = std::sync::Mutex::new(None);

/// `error` as the command line says it, the one conversion of a call's
/// `Status` for every command: in plain words when a connection's
/// [`ConnectFailure`] explains it (a certificate the client refuses, TLS on
/// one side only); else each cause in turn (once: transport errors repeat
/// their sources' words), a `Status` by the coordinator's message first and
/// then the kind of refusal ([`status_text`]).
pub fn explain(error: anyhow::Error) -> anyhow::Error {
    let dialed = DIALED.lock().ok().and_then(|d| d.clone());
    let found = error
        .downcast_ref::<tonic::Status>()
        .zip(dialed)
        .and_then(|(status, dialed)| ConnectFailure::of_status(status, &dialed))
        .filter(|failure| !failure.is_refusal());
    if let Some(failure) = found {
        return failure.into();
    }
    if !error.chain().any(|e| e.is::<tonic::Status>()) {
        return error;
    }
    let mut causes: Vec<String> = Vec::new();
    for cause in error.chain() {
        let text = match cause.downcast_ref::<tonic::Status>() {
            Some(status) => status_text(status),
            None => cause.to_string(),
        };
        if !causes.iter().any(|c| c.starts_with(&text)) {
            causes.push(text);
        }
    }
    anyhow::anyhow!(causes.join(": "))
}

/// A call's `Status` in words: its message, then tonic's description of
/// its code in parentheses (`run 3 is not yours (the caller does not have
/// permission …)`); the description alone when there is no message.
pub fn status_text(status: &tonic::Status) -> String {
    let description = status.code().description();
    let mut lowered = description.chars();
    let kind = match lowered.next() {
        Some(first) => first.to_lowercase().chain(lowered).collect(),
        None => String::new(),
    };
    match status.message() {
        "" => kind,
        message => format!("{message} ({kind})"),
    }
}

fn authed_channel(
    url: &str,
    token: Option<&str>,
    ca: Option<&Path>,
) -> anyhow::Result<(Channel, Auth)> {
    if let Ok(mut dialed) = DIALED.lock() {
        *dialed = Some(Dialed::new(url, ca));
    }
    let ca = ca
        .map(|p| std::fs::read(p).with_context(|| format!("cannot read {}", p.display())))
        .transpose()?;
    Ok((channel(url, ca.as_deref())?, Auth::new(token)?))
}

/// A run-service client of the coordinator at `url` (TLS with the CA in
/// `ca`), sending `token`; must be made inside a runtime.
pub fn admin_client(url: &str, token: Option<&str>, ca: Option<&Path>) -> anyhow::Result<Admin> {
    let (channel, auth) = authed_channel(url, token, ca)?;
    Ok(RunServiceClient::with_interceptor(channel, auth))
}

/// An account-service client of the coordinator at `url`, sending `token`
/// (none for `Login`); must be made inside a runtime.
pub fn accounts_client(
    url: &str,
    token: Option<&str>,
    ca: Option<&Path>,
) -> anyhow::Result<Accounts> {
    let (channel, auth) = authed_channel(url, token, ca)?;
    Ok(AccountServiceClient::with_interceptor(channel, auth))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credentials::Login;

    fn logins() -> Credentials {
        let mut c = Credentials::default();
        for (url, token) in [("http://a:1", "xqt_a"), ("http://b:2/", "xqt_b")] {
            c.insert(Login {
                coordinator: url.to_owned(),
                user: "ana".to_owned(),
                token_name: "n".to_owned(),
                token: token.to_owned(),
            });
        }
        c
    }

    fn target(url: &str, token: Option<&str>) -> Target {
        Target {
            url: url.to_owned(),
            token: token.map(str::to_owned),
        }
    }

    #[test]
    fn a_status_leads_with_its_message() {
        let denied = anyhow::Error::new(tonic::Status::permission_denied("run 3 is not yours"))
            .context("cannot stop run 3");
        let text = format!("{:#}", explain(denied));
        assert!(
            text.starts_with("cannot stop run 3: run 3 is not yours (the caller does not have"),
            "{text}"
        );
        assert!(!text.contains("code:"), "{text}");
        let bare = explain(tonic::Status::not_found("").into()).to_string();
        assert_eq!(bare, "some requested entity was not found");
        let plain = explain(anyhow::anyhow!("no database file x.db")).to_string();
        assert_eq!(plain, "no database file x.db");
    }

    #[test]
    fn a_given_token_wins_and_a_stored_one_goes_only_to_its_coordinator() {
        let stored = logins();
        assert_eq!(
            resolve(None, None, &stored),
            target("http://b:2/", Some("xqt_b")),
            "the newest login"
        );
        assert_eq!(
            resolve(Some("http://a:1/"), None, &stored),
            target("http://a:1/", Some("xqt_a"))
        );
        assert_eq!(
            resolve(Some("http://a:1"), Some("xqt_given"), &stored),
            target("http://a:1", Some("xqt_given"))
        );
        assert_eq!(
            resolve(None, Some("xqt_given"), &stored),
            target("http://b:2/", Some("xqt_given"))
        );
        assert_eq!(
            resolve(Some("http://c:3"), None, &stored),
            target("http://c:3", None),
            "another coordinator gets no stored token"
        );
        assert_eq!(
            resolve(None, None, &Credentials::default()),
            target(DEFAULT_COORDINATOR, None)
        );
    }
}
