//! The tower layer that authenticates, authorizes and rate-limits every
//! call before tonic routes it, and hands the [`Principal`] to the handler
//! in the request's extensions.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use http::HeaderMap;
use tonic::Status;
use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo};

use super::ratelimit::{RateLimiter, RateLimits};
use super::sign_in::{SignInError, SignInGuard, SignInLimits};
use super::tokens::{self, EphemeralToken};
use super::{Permission, Principal, permission};
use crate::service::accounts::{Accounts, User};
use crate::store::Store;

/// Decides who a request comes from and whether it may proceed.
#[derive(Debug)]
pub struct Authenticator {
    /// Token lookups and sign-in's reads, on a read connection.
    reader: Accounts,
    ephemeral: Vec<EphemeralToken>,
    limiter: RateLimiter,
    sign_in: SignInGuard,
}

impl Authenticator {
    pub fn new(reader: Store, ephemeral: Vec<EphemeralToken>, limits: RateLimits) -> Self {
        Authenticator {
            reader: Accounts::new(reader),
            ephemeral,
            limiter: RateLimiter::new(limits),
            sign_in: SignInGuard::default(),
        }
    }

    /// The user `name` if `password` is theirs, for an attempt from `from`,
    /// within the sign-in limits ([`super::sign_in`]).
    pub async fn sign_in(
        &self,
        name: &str,
        password: &str,
        from: IpAddr,
    ) -> Result<User, SignInError> {
        self.sign_in
            .sign_in(&self.reader, name, password, from)
            .await
    }

    /// The same, with sign-in limited by `limits` instead of the defaults.
    pub fn with_sign_in(mut self, limits: SignInLimits) -> Self {
        self.sign_in = SignInGuard::new(limits);
        self
    }

    /// Takes one of `from`'s sign-in attempts for a sign-up.
    pub fn sign_up_attempt(&self, from: IpAddr) -> Result<(), SignInError> {
        self.sign_in.attempt(from)
    }

    /// The caller of a request to `path` with `headers`, or the status that
    /// refuses it; a method open without a token (`Login`) is refused here,
    /// since it has no caller.
    pub async fn authorize(&self, path: &str, headers: &HeaderMap) -> Result<Principal, Status> {
        self.admit(path, headers, None).await?.ok_or_else(|| {
            Status::permission_denied(format!(
                "{} is called without a token",
                xq_proto::quote(path)
            ))
        })
    }

    /// Whether a request to `path` with `headers` from the address `from`
    /// may proceed: `None` for the methods open without a token
    /// ([`Permission::SignIn`], which limits itself, and
    /// [`Permission::Standard`], limited here per address; an unknown
    /// address shares one bucket), else its caller; or the status that
    /// refuses it.
    pub async fn admit(
        &self,
        path: &str,
        headers: &HeaderMap,
        from: Option<IpAddr>,
    ) -> Result<Option<Principal>, Status> {
        let needed = permission(path);
        match needed {
            Some(Permission::SignIn) => return Ok(None),
            Some(Permission::Standard) => {
                let from = from.unwrap_or(IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED));
                if !self.limiter.allow_address(from, Instant::now()) {
                    return Err(Status::resource_exhausted(format!(
                        "address {from} is over its rate of calls without a token; retry later"
                    )));
                }
                return Ok(None);
            }
            _ => {}
        }
        let token = bearer(headers)?;
        let principal = self.identify(token).await?;
        let method = path.rsplit('/').next().unwrap_or(path);
        let Some(needed) = needed else {
            return Err(Status::permission_denied(format!(
                "method {} is not open to any token",
                xq_proto::quote(path)
            )));
        };
        if !principal.role.allows(needed) {
            return Err(Status::permission_denied(format!(
                "a {} token ({:?}) may not call {method}",
                principal.role.as_str(),
                principal.name
            )));
        }
        if !self
            .limiter
            .allow(principal.key, principal.role, Instant::now())
        {
            return Err(Status::resource_exhausted(format!(
                "token {:?} is over its request rate; retry later",
                principal.name
            )));
        }
        Ok(Some(principal))
    }

    async fn identify(&self, token: &str) -> Result<Principal, Status> {
        let hash = tokens::hash(token);
        let mut found = None;
        for (i, e) in self.ephemeral.iter().enumerate() {
            // Every entry is compared, so timing does not tell which matched.
            if tokens::hashes_equal(&e.hash, &hash) && found.is_none() {
                found = Some(Principal {
                    key: -(i as i64) - 1,
                    name: e.name.clone(),
                    role: e.role,
                    user: e.user,
                });
            }
        }
        if let Some(p) = found {
            return Ok(p);
        }
        let stored = self.reader.token(hash).await.map_err(|e| {
            tracing::error!(error = %e, "token lookup failed");
            Status::unavailable("cannot check the token now; retry")
        })?;
        match stored {
            // Row ids start at 1; key 0 is the in-process administrator's
            // (`Principal::in_process`), which no token may ever be.
            Some(found) if found.id != 0 => Ok(Principal {
                key: found.id as i64,
                name: found.name,
                role: found.role,
                user: found.user,
            }),
            _ => Err(Status::unauthenticated("unknown or revoked token")),
        }
    }
}

/// The token of an `authorization: Bearer <token>` header.
fn bearer(headers: &HeaderMap) -> Result<&str, Status> {
    let value = headers
        .get(http::header::AUTHORIZATION)
        .ok_or_else(|| Status::unauthenticated("missing authorization metadata"))?;
    let text = value
        .to_str()
        .map_err(|_| Status::unauthenticated("authorization metadata is not ASCII"))?;
    match text.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() => {
            Ok(token.trim())
        }
        _ => Err(Status::unauthenticated(
            "authorization metadata must be \"Bearer <token>\"",
        )),
    }
}

/// The client's IP address, as tonic's server records the connection
/// (plain TCP, or TCP under TLS).
fn remote_ip<B>(request: &http::Request<B>) -> Option<IpAddr> {
    let extensions = request.extensions();
    extensions
        .get::<TcpConnectInfo>()
        .and_then(TcpConnectInfo::remote_addr)
        .or_else(|| {
            extensions
                .get::<TlsConnectInfo<TcpConnectInfo>>()
                .and_then(|i| i.get_ref().remote_addr())
        })
        .map(|a| a.ip())
}

/// The caller the auth layer attached to a request; INTERNAL if there is
/// none (a handler of a method open without a token must not ask).
pub fn caller<T>(request: &tonic::Request<T>) -> Result<Principal, Status> {
    request
        .extensions()
        .get::<Principal>()
        .cloned()
        .ok_or_else(|| Status::internal("the request passed no authentication"))
}

/// Puts an [`Authenticator`] in front of a service.
#[derive(Debug, Clone)]
pub struct AuthLayer {
    auth: Arc<Authenticator>,
}

impl AuthLayer {
    pub fn new(auth: Arc<Authenticator>) -> Self {
        AuthLayer { auth }
    }
}

impl<S> tower::Layer<S> for AuthLayer {
    type Service = AuthService<S>;

    fn layer(&self, inner: S) -> AuthService<S> {
        AuthService {
            inner,
            auth: Arc::clone(&self.auth),
        }
    }
}

/// The service [`AuthLayer`] makes.
#[derive(Debug, Clone)]
pub struct AuthService<S> {
    inner: S,
    auth: Arc<Authenticator>,
}

impl<S, B> tower::Service<http::Request<B>> for AuthService<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<tonic::body::Body>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        // The clone is not ready; the polled service goes into the future.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let auth = Arc::clone(&self.auth);
        Box::pin(async move {
            let from = remote_ip(&request);
            match auth
                .admit(request.uri().path(), request.headers(), from)
                .await
            {
                Ok(principal) => {
                    if let Some(principal) = principal {
                        request.extensions_mut().insert(principal);
                    }
                    inner.call(request).await
                }
                Err(status) => Ok(status.into_http()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Role;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(http::header::AUTHORIZATION, value.parse().unwrap());
        h
    }

    fn auth() -> Authenticator {
        let store = Store::open_in_memory().unwrap();
        Authenticator::new(
            store,
            vec![
                EphemeralToken::new("admin", Role::Personal, "xqt_admin"),
                EphemeralToken::new("worker", Role::Worker, "xqt_worker"),
            ],
            RateLimits::UNLIMITED,
        )
    }

    const CREATE: &str = "/xq.cluster.v1.RunService/CreateRun";
    const SUBMIT: &str = "/xq.cluster.v1.WorkerService/SubmitResult";

    #[tokio::test]
    async fn roles_and_refusals() {
        let a = auth();
        let p = a
            .authorize(CREATE, &headers("Bearer xqt_admin"))
            .await
            .unwrap();
        assert_eq!((p.key, p.role), (-1, Role::Personal));
        let p = a
            .authorize(SUBMIT, &headers("bearer xqt_worker"))
            .await
            .unwrap();
        assert_eq!((p.key, p.role), (-2, Role::Worker));
        let e = a
            .authorize(CREATE, &headers("Bearer xqt_worker"))
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::PermissionDenied);
        assert!(e.message().contains("CreateRun"), "{}", e.message());
        let e = a
            .authorize(SUBMIT, &headers("Bearer xqt_nope"))
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated);
        let e = a
            .authorize(SUBMIT, &headers("Basic xqt_worker"))
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated);
        let e = a.authorize(SUBMIT, &HeaderMap::new()).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated);
        let e = a
            .authorize(
                "/xq.cluster.v1.RunService/Drop",
                &headers("Bearer xqt_admin"),
            )
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::PermissionDenied);
    }

    #[tokio::test]
    async fn no_token_is_the_in_process_administrator() {
        use crate::access::UserRole;
        use crate::events::Actor;
        use crate::store::{tokens as token_rows, users};
        let store = Store::open_in_memory().unwrap();
        store
            .call(|conn| {
                let root = users::insert(conn, "root", UserRole::Admin, None, true, 1)?;
                let hash = tokens::hash("xqt_stored");
                token_rows::add(conn, &Actor::cli(), "cli", Role::Personal, root, &hash, 1)?;
                Ok(())
            })
            .await
            .unwrap();
        let a = Authenticator::new(
            store,
            vec![EphemeralToken::new(
                "local-personal",
                Role::Personal,
                "xqt_admin",
            )],
            RateLimits::UNLIMITED,
        );
        // A stored token, even one named `cli`, and an ephemeral one are
        // callers of their own: the in-process administrator comes from no
        // header.
        for token in ["Bearer xqt_stored", "Bearer xqt_admin"] {
            let p = a.authorize(CREATE, &headers(token)).await.unwrap();
            assert!(!p.is_in_process(), "{p:?}");
            assert!(!Actor::from(&p).is_local_admin(), "{p:?}");
        }
    }

    #[tokio::test]
    async fn login_alone_is_admitted_without_a_token() {
        let a = auth();
        let login = "/xq.cluster.v1.AccountService/Login";
        assert_eq!(a.admit(login, &HeaderMap::new(), None).await.unwrap(), None);
        let e = a.authorize(login, &HeaderMap::new()).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::PermissionDenied);
        let create = "/xq.cluster.v1.AccountService/CreateToken";
        let e = a.admit(create, &HeaderMap::new(), None).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated);
        let e = a
            .admit(create, &headers("Bearer xqt_worker"), None)
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::PermissionDenied);
        let p = a
            .admit(create, &headers("Bearer xqt_admin"), None)
            .await
            .unwrap();
        assert_eq!(p.map(|p| p.role), Some(Role::Personal));
        let e = a
            .admit(SUBMIT, &headers("Bearer xqt_admin"), None)
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::PermissionDenied);
    }

    #[tokio::test]
    async fn the_standard_services_are_open_and_limited_per_address() {
        let a = Authenticator::new(
            Store::open_in_memory().unwrap(),
            Vec::new(),
            RateLimits {
                open: crate::auth::Rate {
                    per_second: 0.001,
                    burst: 2.0,
                },
                ..RateLimits::UNLIMITED
            },
        );
        let check = "/grpc.health.v1.Health/Check";
        let reflect = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
        let here = Some("192.0.2.7".parse().unwrap());
        assert_eq!(a.admit(check, &HeaderMap::new(), here).await.unwrap(), None);
        assert_eq!(
            a.admit(reflect, &headers("Bearer xqt_nope"), here)
                .await
                .unwrap(),
            None
        );
        let e = a.admit(check, &HeaderMap::new(), here).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::ResourceExhausted);
        assert!(e.message().contains("192.0.2.7"), "{}", e.message());
        let elsewhere = Some("192.0.2.8".parse().unwrap());
        assert_eq!(
            a.admit(check, &HeaderMap::new(), elsewhere).await.unwrap(),
            None
        );
        let e = a
            .admit(SUBMIT, &HeaderMap::new(), elsewhere)
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated);
    }
}
