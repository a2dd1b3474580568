//! `cert`: the cluster's TLS certificates, made in one directory, and the
//! certificate check of `serve --tls-cert/--tls-key`.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use xq_coordinator::tls::ServerTls;
use xq_coordinator::tls::certificate::date;
use xq_coordinator::tls::issue::{
    self, CA_CERT, CA_DAYS, CA_KEY, Names, Pems, Plan, SERVER_CERT, SERVER_DAYS, SERVER_KEY,
};
use xq_proto::{atomic_file, outln};

/// Makes, in DIR, a cluster CA (`ca.pem`, `ca-key.pem`) and the
/// coordinator's certificate signed by it (`coordinator.pem`,
/// `coordinator-key.pem`) for the names and addresses workers dial. Keys
/// are written with mode 0600.
///
/// With the CA already in DIR (`ca.pem` and `ca-key.pem`, e.g. copied back
/// from where its key is kept offline), it makes only a new coordinator
/// certificate signed by that CA (`--force` to replace the old one): for a
/// new name, or before the old one expires; workers keep their `ca.pem`.
/// `--new-ca --force` replaces the CA too, and every worker then needs the
/// new `ca.pem`.
#[derive(Debug, Args)]
pub struct CertArgs {
    /// Directory of the files (created if missing).
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
    /// A host name workers and clients dial (repeat for several; `*.` for a
    /// wildcard).
    #[arg(long = "name", value_name = "HOST")]
    names: Vec<String>,
    /// An IP address workers and clients dial (repeat for several).
    #[arg(long = "ip", value_name = "ADDR")]
    ips: Vec<IpAddr>,
    /// Days the coordinator certificate is valid.
    #[arg(long, default_value_t = SERVER_DAYS)]
    days: u32,
    /// Days a new CA is valid.
    #[arg(long, default_value_t = CA_DAYS)]
    ca_days: u32,
    /// Replace files that exist.
    #[arg(long)]
    force: bool,
    /// Make a new CA even if DIR has one (with --force to replace it).
    #[arg(long)]
    new_ca: bool,
}

impl CertArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let names = Names::new(self.names, self.ips)?;
        let dir = &self.dir;
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let plan = issue::plan(|f| dir.join(f).exists(), self.force, self.new_ca)
            .with_context(|| format!("in {}", dir.display()))?;
        let today = xq_coordinator::service::now_ms() / 86_400_000;
        let ca = match plan {
            Plan::NewCa => issue::new_ca(today, self.ca_days)?,
            Plan::ExistingCa => Pems {
                cert: read(&dir.join(CA_CERT))?,
                key: read(&dir.join(CA_KEY))?,
            },
        };
        let server = issue::server(&ca, &names, today, self.days)?;
        if plan == Plan::NewCa {
            write(&dir.join(CA_CERT), &ca.cert, false)?;
            write(&dir.join(CA_KEY), &ca.key, true)?;
        }
        write(&dir.join(SERVER_CERT), &server.cert, false)?;
        write(&dir.join(SERVER_KEY), &server.key, true)?;
        let path = |f: &str| dir.join(f).display().to_string();
        let made = if plan == Plan::NewCa { "made" } else { "kept" };
        outln!(
            "{made} {}: the cluster CA; give it to every worker and client (--ca)",
            path(CA_CERT)
        )?;
        outln!(
            "{made} {}: the CA's key (mode 0600); keep it offline: it signs new coordinator \
             certificates (`xq-coordinator cert --dir DIR --force` with it back in DIR)",
            path(CA_KEY)
        )?;
        outln!(
            "made {}: the coordinator's certificate for {}, valid until {} UTC",
            path(SERVER_CERT),
            names.text().join(", "),
            issue::expiry(&server.cert).unwrap_or_default()
        )?;
        outln!(
            "made {}: its key (mode 0600); only the coordinator needs it",
            path(SERVER_KEY)
        )?;
        let host = match (names.dns.first(), names.ips.first()) {
            (Some(name), _) => name.trim_start_matches("*.").to_owned(),
            (None, Some(IpAddr::V6(ip))) => format!("[{ip}]"),
            (None, Some(ip)) => ip.to_string(),
            (None, None) => unreachable!("Names has one"),
        };
        outln!("")?;
        outln!("on the coordinator:")?;
        outln!(
            "  xq-coordinator serve --db xq.db --listen 0.0.0.0:50051 --http 0.0.0.0:8080 \
             --tls-cert {} --tls-key {}",
            path(SERVER_CERT),
            path(SERVER_KEY)
        )?;
        outln!("  (the web view is then https://{host}:8080/, with the same certificate)")?;
        outln!(
            "on each worker (with its copy of {CA_CERT}, here where it is now, and the token \
             in a file of mode 0600):"
        )?;
        outln!(
            "  xq-worker work --coordinator https://{host}:50051 --ca {} --token-file worker.token",
            path(CA_CERT)
        )?;
        Ok(())
    }
}

fn read(file: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))
}

/// Writes `text` to `file`, replacing it whole ([`issue::plan`] has decided
/// that), mode 0600 from its first byte if `private`.
fn write(file: &Path, text: &str, private: bool) -> anyhow::Result<()> {
    let written = if private {
        atomic_file::write_private(file, text.as_bytes())
    } else {
        atomic_file::write(file, text.as_bytes())
    };
    written.with_context(|| format!("cannot write {}", file.display()))
}

/// The certificate and key of `serve --tls-cert/--tls-key`, checked as
/// clients will check them; prints the names they cover.
pub fn server_tls(cert: &Path, key: &Path) -> anyhow::Result<ServerTls> {
    let bytes = |p: &Path| std::fs::read(p).with_context(|| format!("cannot read {}", p.display()));
    let tls = ServerTls::from_pem(&bytes(cert)?, &bytes(key)?).with_context(|| {
        format!(
            "cannot serve TLS with --tls-cert {} --tls-key {}",
            cert.display(),
            key.display()
        )
    })?;
    let info = tls.info();
    outln!(
        "TLS certificate for {}, valid until {} UTC",
        info.names_text(),
        date(info.not_after)
    )?;
    Ok(tls)
}
