//! The cluster's certificates (`xq-coordinator cert`): a CA that workers
//! trust (`--ca ca.pem`) and, signed by it, the coordinator's certificate,
//! which is what clients accept from a server: CA:FALSE, the coordinator's
//! names and addresses as subjectAltNames, extendedKeyUsage serverAuth.
//! Keys are ECDSA P-256. [`plan`] decides, from the files a directory holds,
//! what a run of the command makes and what it refuses to overwrite.

use std::net::IpAddr;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, PublicKeyData, SanType,
};

use super::certificate::{CertificateInfo, date};

/// The files of a cluster's certificates, by their names in its directory.
pub const CA_CERT: &str = "ca.pem";
pub const CA_KEY: &str = "ca-key.pem";
pub const SERVER_CERT: &str = "coordinator.pem";
pub const SERVER_KEY: &str = "coordinator-key.pem";

/// Days a new CA is valid: ten years, as it is handed to every worker once.
pub const CA_DAYS: u32 = 3650;
/// Days a coordinator certificate is valid by default: two years; it is
/// made again from the CA (`--force`) without touching any worker.
pub const SERVER_DAYS: u32 = 730;

/// Why certificates cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum IssueError {
    #[error("give the coordinator's host name(s) (--name) or address(es) (--ip) that workers dial")]
    NoNames,
    #[error("{0} is an IP address: give it with --ip, not --name")]
    AddressAsName(String),
    #[error("{0} is not a host name (letters, digits, '-', '.', or a leading '*.')")]
    BadName(String),
    #[error("--days must be at least 1")]
    NoDays,
    #[error("{file} already exists; --force replaces it{hint}")]
    Exists {
        file: &'static str,
        hint: &'static str,
    },
    #[error(
        "{present} is here but {missing} is not: the cluster CA needs both (--new-ca --force \
         makes a new CA, and every worker then needs the new {CA_CERT})"
    )]
    HalfCa {
        present: &'static str,
        missing: &'static str,
    },
    #[error("{CA_CERT} is not a CA certificate (basicConstraints CA:TRUE); it cannot sign")]
    NotCa,
    #[error("{CA_KEY} is not the key of {CA_CERT}")]
    CaKeyMismatch,
    #[error("cannot read {file}: {reason}")]
    Read { file: &'static str, reason: String },
    #[error("cannot make the certificate: {0}")]
    Rcgen(#[from] rcgen::Error),
}

/// What a run makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// A new CA and a coordinator certificate signed by it.
    NewCa,
    /// A coordinator certificate signed by the CA already in the directory.
    ExistingCa,
}

/// What to make given which files exist (`exists(name)`), `--force` and
/// `--new-ca`: the CA already there is used unless `new_ca`; nothing is
/// overwritten without `force`.
pub fn plan(exists: impl Fn(&str) -> bool, force: bool, new_ca: bool) -> Result<Plan, IssueError> {
    let (cert, key) = (exists(CA_CERT), exists(CA_KEY));
    let plan = match (cert, key, new_ca) {
        (_, _, true) | (false, false, false) => Plan::NewCa,
        (true, true, false) => Plan::ExistingCa,
        (true, false, false) => {
            return Err(IssueError::HalfCa {
                present: CA_CERT,
                missing: CA_KEY,
            });
        }
        (false, true, false) => {
            return Err(IssueError::HalfCa {
                present: CA_KEY,
                missing: CA_CERT,
            });
        }
    };
    if !force {
        let mut written = vec![SERVER_CERT, SERVER_KEY];
        if plan == Plan::NewCa {
            written.splice(0..0, [CA_CERT, CA_KEY]);
        }
        if let Some(file) = written.into_iter().find(|f| exists(f)) {
            let hint = if plan == Plan::NewCa && (file == CA_CERT || file == CA_KEY) {
                " (a new CA: every worker then needs the new ca.pem)"
            } else {
                " (signed by the CA here, which stays)"
            };
            return Err(IssueError::Exists { file, hint });
        }
    }
    Ok(plan)
}

/// The names a coordinator certificate is for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    pub dns: Vec<String>,
    pub ips: Vec<IpAddr>,
}

impl Names {
    /// `dns` and `ips`, checked: at least one, host names that are not
    /// addresses.
    pub fn new(dns: Vec<String>, ips: Vec<IpAddr>) -> Result<Self, IssueError> {
        if dns.is_empty() && ips.is_empty() {
            return Err(IssueError::NoNames);
        }
        for name in &dns {
            if name.parse::<IpAddr>().is_ok() {
                return Err(IssueError::AddressAsName(xq_proto::quote(name)));
            }
            let body = name.strip_prefix("*.").unwrap_or(name);
            let label_ok = |l: &str| {
                !l.is_empty()
                    && l.len() <= 63
                    && !l.starts_with('-')
                    && !l.ends_with('-')
                    && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            };
            if name.len() > 253 || !body.split('.').all(label_ok) {
                return Err(IssueError::BadName(xq_proto::quote(name)));
            }
        }
        Ok(Names { dns, ips })
    }

    /// All, as text: names first.
    pub fn text(&self) -> Vec<String> {
        let ips = self.ips.iter().map(IpAddr::to_string);
        self.dns.iter().cloned().chain(ips).collect()
    }
}

/// A certificate and its private key, PEM.
#[derive(Clone)]
pub struct Pems {
    pub cert: String,
    pub key: String,
}

impl std::fmt::Debug for Pems {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pems").finish_non_exhaustive()
    }
}

/// Validity from the day before `today` (days since the Unix epoch; a
/// worker's clock a little behind still accepts it) to `days` after it.
fn validity(params: &mut CertificateParams, today: i64, days: u32) {
    let at = |d: i64| {
        let (y, m, d) = xq_proto::utc::civil_from_days(d);
        rcgen::date_time_ymd(y as i32, m as u8, d as u8)
    };
    params.not_before = at(today - 1);
    params.not_after = at(today + i64::from(days));
}

/// A new cluster CA valid for `days` from `today` (days since the epoch).
pub fn new_ca(today: i64, days: u32) -> Result<Pems, IssueError> {
    if days == 0 {
        return Err(IssueError::NoDays);
    }
    let mut params = CertificateParams::default();
    // A name of its own: a client looks up the issuer by name, and two
    // clusters' CAs of one name would make the wrong one fail as a bad
    // signature instead of an unknown CA.
    let tag: u32 = rand::random();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, format!("xq cluster CA {tag:08x}"));
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    validity(&mut params, today, days);
    let key = KeyPair::generate()?;
    let cert = params.self_signed(&key)?;
    Ok(Pems {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// A coordinator certificate for `names`, valid for `days` from `today`,
/// signed by the CA `ca` (checked to be a CA with its own key).
pub fn server(ca: &Pems, names: &Names, today: i64, days: u32) -> Result<Pems, IssueError> {
    if days == 0 {
        return Err(IssueError::NoDays);
    }
    let ca_key = KeyPair::from_pem(&ca.key).map_err(|e| IssueError::Read {
        file: CA_KEY,
        reason: e.to_string(),
    })?;
    let ca_der = rustls::pki_types::pem::PemObject::from_pem_slice(ca.cert.as_bytes())
        .map_err(|e: rustls::pki_types::pem::Error| IssueError::Read {
            file: CA_CERT,
            reason: e.to_string(),
        })
        .map(|d: rustls::pki_types::CertificateDer<'static>| d)?;
    let ca_info = CertificateInfo::read(&ca_der).map_err(|reason| IssueError::Read {
        file: CA_CERT,
        reason,
    })?;
    if !ca_info.is_ca {
        return Err(IssueError::NotCa);
    }
    if ca_info.spki != ca_key.subject_public_key_info() {
        return Err(IssueError::CaKeyMismatch);
    }
    let issuer = Issuer::from_ca_cert_der(&ca_der, ca_key)?;
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, names.text()[0].clone());
    params.distinguished_name = dn;
    for name in &names.dns {
        params
            .subject_alt_names
            .push(SanType::DnsName(name.clone().try_into()?));
    }
    params
        .subject_alt_names
        .extend(names.ips.iter().copied().map(SanType::IpAddress));
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    validity(&mut params, today, days);
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, &issuer)?;
    Ok(Pems {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// When `pem`'s certificate stops being valid, as `YYYY-MM-DD HH:MM`.
pub fn expiry(pem: &str) -> Option<String> {
    let der: rustls::pki_types::CertificateDer<'static> =
        rustls::pki_types::pem::PemObject::from_pem_slice(pem.as_bytes()).ok()?;
    CertificateInfo::read(&der).ok().map(|i| date(i.not_after))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::{ServerTls, TlsSetupError, certificate::CertificateProblem};

    const TODAY: i64 = 20_454; // 2026-01-01

    fn names() -> Names {
        Names::new(
            vec!["coordinator.example.org".to_owned()],
            vec!["203.0.113.5".parse().unwrap()],
        )
        .unwrap()
    }

    #[test]
    fn the_plan_uses_a_ca_already_there_and_overwrites_only_with_force() {
        let has = |files: &'static [&'static str]| move |f: &str| files.contains(&f);
        assert_eq!(plan(has(&[]), false, false).unwrap(), Plan::NewCa);
        assert_eq!(
            plan(has(&[CA_CERT, CA_KEY]), false, false).unwrap(),
            Plan::ExistingCa
        );
        let all: &[&str] = &[CA_CERT, CA_KEY, SERVER_CERT, SERVER_KEY];
        let refused = plan(has(all), false, false).unwrap_err().to_string();
        assert!(
            refused.contains("coordinator.pem already exists"),
            "{refused}"
        );
        assert!(refused.contains("which stays"), "{refused}");
        assert_eq!(plan(has(all), true, false).unwrap(), Plan::ExistingCa);
        let refused = plan(has(all), false, true).unwrap_err().to_string();
        assert!(refused.contains("ca.pem already exists"), "{refused}");
        assert_eq!(plan(has(all), true, true).unwrap(), Plan::NewCa);
        assert!(matches!(
            plan(has(&[CA_CERT]), true, false),
            Err(IssueError::HalfCa {
                missing: CA_KEY,
                ..
            })
        ));
        assert!(matches!(
            plan(has(&[CA_KEY]), false, true),
            Err(IssueError::Exists { file: CA_KEY, .. })
        ));
        assert_eq!(plan(has(&[CA_KEY]), true, true).unwrap(), Plan::NewCa);
        assert!(matches!(
            plan(has(&[SERVER_KEY]), false, false),
            Err(IssueError::Exists {
                file: SERVER_KEY,
                ..
            })
        ));
    }

    #[test]
    fn names_are_checked() {
        assert!(matches!(
            Names::new(vec![], vec![]),
            Err(IssueError::NoNames)
        ));
        assert!(matches!(
            Names::new(vec!["10.0.0.1".to_owned()], vec![]),
            Err(IssueError::AddressAsName(_))
        ));
        assert!(matches!(
            Names::new(vec!["bad name".to_owned()], vec![]),
            Err(IssueError::BadName(_))
        ));
        let ok = Names::new(vec!["*.example.org".to_owned(), "a-1".to_owned()], vec![]);
        assert!(ok.is_ok());
        assert_eq!(names().text(), ["coordinator.example.org", "203.0.113.5"]);
    }

    #[test]
    fn the_server_certificate_is_no_ca_has_the_names_and_serves() {
        let ca = new_ca(TODAY, CA_DAYS).unwrap();
        let server = server(&ca, &names(), TODAY, 30).unwrap();
        let now = TODAY * 86_400 + 3600;
        let tls = ServerTls::from_pem_at(server.cert.as_bytes(), server.key.as_bytes(), now)
            .expect("a certificate clients accept");
        assert!(!tls.info().is_ca);
        assert_eq!(tls.info().names, names().text());
        assert_eq!(expiry(&server.cert).unwrap(), "2026-01-31 00:00");
        // The CA itself cannot be served, nor another key.
        let refused = ServerTls::from_pem_at(ca.cert.as_bytes(), ca.key.as_bytes(), now);
        assert!(matches!(
            refused,
            Err(TlsSetupError::Problem(CertificateProblem::CaCertificate))
        ));
        let refused = ServerTls::from_pem_at(server.cert.as_bytes(), ca.key.as_bytes(), now);
        assert!(
            matches!(refused, Err(TlsSetupError::KeyMismatch)),
            "{refused:?}"
        );
        let expired = ServerTls::from_pem_at(
            server.cert.as_bytes(),
            server.key.as_bytes(),
            now + 40 * 86_400,
        );
        assert!(matches!(
            expired,
            Err(TlsSetupError::Problem(CertificateProblem::Expired(_)))
        ));
    }

    #[test]
    fn a_ca_must_be_a_ca_with_its_own_key() {
        let ca = new_ca(TODAY, CA_DAYS).unwrap();
        let other = new_ca(TODAY, CA_DAYS).unwrap();
        let mixed = Pems {
            cert: ca.cert.clone(),
            key: other.key.clone(),
        };
        assert!(matches!(
            server(&mixed, &names(), TODAY, 30),
            Err(IssueError::CaKeyMismatch)
        ));
        let leaf = server(&ca, &names(), TODAY, 30).unwrap();
        assert!(matches!(
            server(&leaf, &names(), TODAY, 30),
            Err(IssueError::NotCa)
        ));
        assert!(matches!(new_ca(TODAY, 0), Err(IssueError::NoDays)));
    }
}
