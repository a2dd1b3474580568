//! Where the view's connections come from: a plain TCP listener, or the
//! coordinator's TLS acceptor with the gRPC port's certificate
//! ([`web_incoming`]), which also answers plain-HTTP visitors of the TLS
//! port. Either way each connection carries its TCP peer's address
//! ([`Connection`]), which [`crate::account::Peer`] reads.

use std::net::{Ipv4Addr, SocketAddr};

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::net::TcpListener;
use tokio_stream::StreamExt;
use xq_coordinator::tls::ServerTls;
use xq_coordinator::tls::accept::{Incoming, Stream, web_incoming};

/// The TCP peer of a connection, plain or TLS.
#[derive(Debug, Clone, Copy)]
pub struct Connection(pub SocketAddr);

impl Connected<IncomingStream<'_, TcpListener>> for Connection {
    fn connect_info(stream: IncomingStream<'_, TcpListener>) -> Self {
        Connection(*stream.remote_addr())
    }
}

impl Connected<IncomingStream<'_, TlsListener>> for Connection {
    fn connect_info(stream: IncomingStream<'_, TlsListener>) -> Self {
        Connection(*stream.remote_addr())
    }
}

/// Connections whose TLS handshake succeeded, as axum's [`Listener`].
#[derive(Debug)]
pub struct TlsListener {
    incoming: Incoming,
    local: SocketAddr,
}

impl TlsListener {
    /// Accepts on `listener` with `tls` (its web configuration, ALPN
    /// `http/1.1`).
    pub fn new(listener: TcpListener, tls: &ServerTls) -> std::io::Result<Self> {
        let local = listener.local_addr()?;
        Ok(TlsListener {
            incoming: web_incoming(listener, tls),
            local,
        })
    }
}

impl Listener for TlsListener {
    type Io = Stream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.incoming.next().await {
            Some(Ok(stream)) => {
                let peer = stream
                    .get_ref()
                    .0
                    .peer_addr()
                    .unwrap_or(SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)));
                (stream, peer)
            }
            // The accept loop ends only when this stream is dropped.
            Some(Err(never)) => match never {},
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}
