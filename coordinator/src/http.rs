//! The HTTP side served beside gRPC (the web view and `/metrics`, in the
//! `xq-web` crate). The server hands it the connections and services it
//! shares with the gRPC calls and does not depend on what it serves.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::auth::Authenticator;
use crate::metrics::Metrics;
use crate::service::Core;
use crate::store::Store;

/// A boxed future the view and the server exchange.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// What the server shares with the HTTP view.
#[derive(Debug)]
pub struct ViewParts {
    /// A read-only connection of its own, so pages never queue behind writes.
    pub reader: Store,
    /// The writer, for what is neither a run nor a lease: sign-up, sessions,
    /// users.
    pub store: Store,
    /// The core: the view's reads of runs, workers and games, and the
    /// writes it offers (stop, clone, create, approve, …) as gRPC makes them.
    pub core: Core,
    /// The same token hashes, revocations and rate limits as gRPC.
    pub auth: Arc<Authenticator>,
    /// The counters `/metrics` exports; the view adds its requests to them.
    pub metrics: Arc<Metrics>,
    /// Mark cookies `Secure`: the view is reached over HTTPS.
    pub secure_cookies: bool,
    /// Serve HTTPS with this certificate (the gRPC port's,
    /// [`crate::tls::accept::web_incoming`]); plain HTTP if `None`.
    pub tls: Option<crate::tls::ServerTls>,
    /// Reverse proxies whose `X-Forwarded-For` names the client.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Whether `/sign-up` makes accounts.
    pub open_sign_up: bool,
    /// How many bytes of blobs one user's uploads may store (the upload form).
    pub upload_quota: crate::service::registry::UploadQuota,
}

/// An HTTP view the server runs next to its gRPC services.
pub trait HttpView: Send + 'static {
    /// Serves on `listener` until `shutdown` completes.
    fn serve(
        self: Box<Self>,
        listener: TcpListener,
        parts: ViewParts,
        shutdown: BoxFuture<()>,
    ) -> BoxFuture<std::io::Result<()>>;
}

/// Where and what to serve over HTTP.
pub struct Http {
    /// The bound address.
    pub listener: TcpListener,
    /// The view served on it.
    pub view: Box<dyn HttpView>,
}

impl Http {
    /// `view` on `listener`.
    pub fn new(listener: TcpListener, view: impl HttpView) -> Self {
        Http {
            listener,
            view: Box::new(view),
        }
    }
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http")
            .field("listener", &self.listener.local_addr().ok())
            .finish_non_exhaustive()
    }
}
