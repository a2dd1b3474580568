//! A certificate as a TLS client will judge it, read from its DER once:
//! whether it is a CA's, when it is valid, which names it covers, whether a
//! server may present it; and the judgement itself ([`judge`]), which is
//! what `serve --tls-cert` refuses to start with.

use std::net::IpAddr;

use x509_parser::extensions::GeneralName;
use x509_parser::prelude::{FromDer, X509Certificate};

/// What of a certificate decides whether clients accept it from a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertificateInfo {
    /// basicConstraints says CA:TRUE.
    pub is_ca: bool,
    /// Valid from this Unix time (seconds) ...
    pub not_before: i64,
    /// ... to this one.
    pub not_after: i64,
    /// The subjectAltName entries clients match the host they dial against:
    /// DNS names and IP addresses, as text, in the certificate's order.
    pub names: Vec<String>,
    /// An extendedKeyUsage that does not allow TLS servers (serverAuth).
    pub not_for_servers: bool,
    /// The subjectPublicKeyInfo (DER), to match a private key against.
    pub spki: Vec<u8>,
}

impl CertificateInfo {
    /// Reads `der`; `Err` says what could not be read.
    pub fn read(der: &[u8]) -> Result<Self, String> {
        let (_, cert) = X509Certificate::from_der(der).map_err(|e| e.to_string())?;
        let is_ca = cert
            .basic_constraints()
            .map_err(|e| e.to_string())?
            .is_some_and(|b| b.value.ca);
        let names = match cert.subject_alternative_name().map_err(|e| e.to_string())? {
            Some(san) => san.value.general_names.iter().filter_map(name).collect(),
            None => Vec::new(),
        };
        let not_for_servers = cert
            .extended_key_usage()
            .map_err(|e| e.to_string())?
            .is_some_and(|eku| !eku.value.any && !eku.value.server_auth);
        Ok(CertificateInfo {
            is_ca,
            not_before: cert.validity().not_before.timestamp(),
            not_after: cert.validity().not_after.timestamp(),
            names,
            not_for_servers,
            spki: cert.public_key().raw.to_vec(),
        })
    }

    /// The names, comma-separated (`(none)` without any).
    pub fn names_text(&self) -> String {
        if self.names.is_empty() {
            "(none)".to_owned()
        } else {
            self.names.join(", ")
        }
    }
}

/// A DNS name or an IP address as text.
fn name(general: &GeneralName<'_>) -> Option<String> {
    match general {
        GeneralName::DNSName(dns) => Some((*dns).to_owned()),
        GeneralName::IPAddress(bytes) => match bytes.len() {
            4 => Some(IpAddr::from(<[u8; 4]>::try_from(*bytes).ok()?).to_string()),
            16 => Some(IpAddr::from(<[u8; 16]>::try_from(*bytes).ok()?).to_string()),
            _ => None,
        },
        _ => None,
    }
}

/// What makes every client refuse a server's certificate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CertificateProblem {
    #[error(
        "the certificate is a CA certificate (basicConstraints CA:TRUE, which the one-line \
         `openssl req -x509` makes), and clients refuse a CA certificate as a server's; \
         make a cluster CA and a certificate for this server with \
         `xq-coordinator cert --dir DIR --name HOST` (or --ip ADDR), serve \
         DIR/coordinator.pem with DIR/coordinator-key.pem, and give workers DIR/ca.pem (--ca)"
    )]
    CaCertificate,
    #[error(
        "the certificate expired on {0} (UTC); make a new one, e.g. \
         `xq-coordinator cert --dir DIR --name HOST --force` with the cluster CA in DIR"
    )]
    Expired(String),
    #[error(
        "the certificate is not valid before {0} (UTC): check this machine's clock, \
         or make one that is valid now (`xq-coordinator cert`)"
    )]
    NotYetValid(String),
    #[error(
        "the certificate names no host (no subjectAltName DNS name or IP address), so no \
         client accepts it; make one with `xq-coordinator cert --name HOST` (or --ip ADDR)"
    )]
    NoNames,
    #[error(
        "the certificate is not for TLS servers (its extendedKeyUsage lacks serverAuth); \
         make one with `xq-coordinator cert`"
    )]
    NotForServers,
}

/// Whether clients accept `info` from a server at Unix time `now` (seconds),
/// whatever host they dial; the first problem found.
pub fn judge(info: &CertificateInfo, now: i64) -> Result<(), CertificateProblem> {
    if info.is_ca {
        return Err(CertificateProblem::CaCertificate);
    }
    if now > info.not_after {
        return Err(CertificateProblem::Expired(date(info.not_after)));
    }
    if now < info.not_before {
        return Err(CertificateProblem::NotYetValid(date(info.not_before)));
    }
    if info.names.is_empty() {
        return Err(CertificateProblem::NoNames);
    }
    if info.not_for_servers {
        return Err(CertificateProblem::NotForServers);
    }
    Ok(())
}

/// `YYYY-MM-DD HH:MM` of Unix time `secs` (UTC).
pub fn date(secs: i64) -> String {
    let (y, m, d) = xq_proto::utc::civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}", s / 3600, s / 60 % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{
        BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, KeyPair, SanType,
    };

    fn info(f: impl FnOnce(&mut CertificateParams)) -> CertificateInfo {
        let mut params = CertificateParams::new(vec!["coord.example".to_owned()]).unwrap();
        params
            .subject_alt_names
            .push(SanType::IpAddress("203.0.113.5".parse().unwrap()));
        params.not_before = rcgen::date_time_ymd(2025, 1, 1);
        params.not_after = rcgen::date_time_ymd(2027, 1, 1);
        f(&mut params);
        let cert = params.self_signed(&KeyPair::generate().unwrap()).unwrap();
        CertificateInfo::read(cert.der()).unwrap()
    }

    const JAN_2026: i64 = 1_767_225_600;

    #[test]
    fn a_server_certificate_passes_and_its_names_are_read() {
        let good = info(|p| p.is_ca = IsCa::ExplicitNoCa);
        assert_eq!(good.names, ["coord.example", "203.0.113.5"]);
        assert!(!good.is_ca);
        assert_eq!(judge(&good, JAN_2026), Ok(()));
        assert_eq!(date(good.not_after), "2027-01-01 00:00");
    }

    #[test]
    fn a_ca_certificate_is_refused_first() {
        let ca = info(|p| p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained));
        assert!(ca.is_ca);
        assert_eq!(judge(&ca, JAN_2026), Err(CertificateProblem::CaCertificate));
        assert!(
            CertificateProblem::CaCertificate
                .to_string()
                .contains("xq-coordinator cert")
        );
    }

    #[test]
    fn validity_names_and_purpose_are_judged() {
        let good = info(|_| {});
        assert_eq!(
            judge(&good, good.not_after + 1),
            Err(CertificateProblem::Expired("2027-01-01 00:00".to_owned()))
        );
        assert_eq!(
            judge(&good, good.not_before - 1),
            Err(CertificateProblem::NotYetValid(
                "2025-01-01 00:00".to_owned()
            ))
        );
        let nameless = info(|p| p.subject_alt_names.clear());
        assert_eq!(judge(&nameless, JAN_2026), Err(CertificateProblem::NoNames));
        let client_only =
            info(|p| p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth]);
        assert_eq!(
            judge(&client_only, JAN_2026),
            Err(CertificateProblem::NotForServers)
        );
        let server = info(|p| p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth]);
        assert_eq!(judge(&server, JAN_2026), Ok(()));
    }
}
