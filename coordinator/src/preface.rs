//! Slow-loris defence at the connection's start: a client must send its
//! whole HTTP/2 connection preface (the 24-byte magic and its SETTINGS
//! frame) within a deadline, or the connection is closed. hyper waits for
//! the preface forever, so without this a client could hold a socket and a
//! task per connection by sending nothing, or a byte now and then.
//!
//! Once the preface is in, HTTP/2 keepalive takes over
//! ([`ConnectionTimeouts`]): a peer that stops answering pings, as one that
//! trickles a frame byte by byte from a raw socket does, is dropped.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;
use tonic::transport::server::Connected;

/// How long slow or silent clients keep a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionTimeouts {
    /// From the connection (or the end of the TLS handshake) to the end of
    /// the client's HTTP/2 preface.
    pub preface: Duration,
    /// A connection silent this long is sent an HTTP/2 ping ...
    pub keepalive_interval: Duration,
    /// ... and closed if the ping is not answered within this.
    pub keepalive_timeout: Duration,
}

impl Default for ConnectionTimeouts {
    /// 10 s for the preface (as for a TLS handshake); a ping after 60 s of
    /// silence, answered within 20 s (gRPC clients answer pings themselves,
    /// so an honest idle worker is never dropped).
    fn default() -> Self {
        ConnectionTimeouts {
            preface: Duration::from_secs(10),
            keepalive_interval: Duration::from_secs(60),
            keepalive_timeout: Duration::from_secs(20),
        }
    }
}

/// The client magic, then a frame header (9 bytes) whose payload length
/// is its first 3 bytes: the preface ends after that SETTINGS payload.
const MAGIC: usize = 24;
const FRAME_HEADER: usize = 9;

/// A connection whose first bytes must arrive before a deadline.
#[derive(Debug)]
pub struct PrefaceDeadline<IO> {
    io: IO,
    /// The first bytes read so far, up to the SETTINGS frame's header.
    head: [u8; MAGIC + FRAME_HEADER],
    /// Bytes read so far, while the preface is incomplete.
    read: usize,
    /// Cleared once the preface is complete.
    deadline: Option<Pin<Box<Sleep>>>,
    limit: Duration,
}

impl<IO> PrefaceDeadline<IO> {
    /// `io`, closed unless its preface is read within `limit` from now.
    pub fn new(io: IO, limit: Duration) -> Self {
        PrefaceDeadline {
            io,
            head: [0; MAGIC + FRAME_HEADER],
            read: 0,
            deadline: Some(Box::pin(tokio::time::sleep(limit))),
            limit,
        }
    }

    /// Counts `bytes` just read; lifts the deadline once the preface is in.
    fn saw(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.read < self.head.len() {
                self.head[self.read] = b;
            }
            self.read += 1;
        }
        if self.read >= self.head.len() {
            let h = &self.head[MAGIC..];
            let payload = (usize::from(h[0]) << 16) | (usize::from(h[1]) << 8) | usize::from(h[2]);
            if self.read >= self.head.len() + payload {
                self.deadline = None;
            }
        }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for PrefaceDeadline<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if self.deadline.is_some() {
                    let new = buf.filled()[before..].to_vec();
                    self.saw(&new);
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                let limit = self.limit;
                match self.deadline.as_mut().map(|d| d.as_mut().poll(cx)) {
                    Some(Poll::Ready(())) => Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("no HTTP/2 preface within {} s", limit.as_secs_f64()),
                    ))),
                    _ => Poll::Pending,
                }
            }
        }
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for PrefaceDeadline<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

impl<IO: Connected> Connected for PrefaceDeadline<IO> {
    type ConnectInfo = IO::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.connect_info()
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

    #[tokio::test]
    async fn a_partial_preface_times_out() {
        let (client, server) = tokio::io::duplex(64);
        let mut server = PrefaceDeadline::new(server, Duration::from_millis(100));
        let mut client = client;
        client.write_all(&PREFACE[..5]).await.unwrap();
        let mut buf = [0; 64];
        assert_eq!(server.read(&mut buf).await.unwrap(), 5);
        let e = server.read(&mut buf).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
    }

    #[tokio::test]
    async fn a_whole_preface_lifts_the_deadline() {
        let (mut client, server) = tokio::io::duplex(64);
        let mut server = PrefaceDeadline::new(server, Duration::from_millis(100));
        // The magic, then SETTINGS with one 6-byte setting.
        client.write_all(PREFACE).await.unwrap();
        client
            .write_all(&[0, 0, 6, 4, 0, 0, 0, 0, 0])
            .await
            .unwrap();
        client.write_all(&[0, 3, 0, 0, 0, 100]).await.unwrap();
        let mut buf = [0; 64];
        let mut got = 0;
        while got < PREFACE.len() + 15 {
            got += server.read(&mut buf).await.unwrap();
        }
        let reading = tokio::spawn(async move { server.read(&mut buf).await.map(|_| ()) });
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(
            !reading.is_finished(),
            "an idle connection after its preface stays"
        );
        client.write_all(b"x").await.unwrap();
        reading.await.unwrap().unwrap();
    }
}
