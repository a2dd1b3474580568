//! A TCP proxy on 127.0.0.1 that misbehaves on demand, for putting a bad
//! network between a worker and the coordinator.
//!
//! Every accepted connection gets its own upstream connection to the
//! target port (made anew each time, so a restarted coordinator on the same
//! port is reached again). What happens to the bytes is the proxy's
//! [`Fault`] at the moment they arrive; [`ChaosProxy::reset`] ends every open
//! connection with a TCP reset.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What the proxy does to traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fault {
    /// Forwards bytes as they come.
    #[default]
    None,
    /// Holds every chunk this long before forwarding it.
    Delay(Duration),
    /// Closes new connections at once (the coordinator looks down).
    Refuse,
    /// Accepts connections and swallows every byte both ways: a partition
    /// (see [`ChaosProxy::end_partition`]).
    Blackhole,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct State {
    fault: Fault,
    /// Bumped by every reset; a connection opened in an earlier epoch ends.
    epoch: u64,
    /// Partitions begun; a connection open when one began swallows for good.
    partitions: u64,
}

/// A running proxy; stops when dropped.
#[derive(Debug)]
pub struct ChaosProxy {
    pub addr: SocketAddr,
    state: Arc<watch::Sender<State>>,
    accept: JoinHandle<()>,
}

impl ChaosProxy {
    /// Listens on `127.0.0.1:0` and forwards to `127.0.0.1:upstream`.
    pub async fn start(upstream: u16) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(
            watch::channel(State {
                fault: Fault::None,
                epoch: 0,
                partitions: 0,
            })
            .0,
        );
        let accept = tokio::spawn(accept_loop(listener, upstream, state.clone()));
        Ok(ChaosProxy {
            addr,
            state,
            accept,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn fault(&self) -> Fault {
        self.state.borrow().fault
    }

    /// Sets the fault for traffic from now on; entering [`Fault::Refuse`]
    /// also resets the open connections.
    pub fn set(&self, fault: Fault) {
        self.state.send_modify(|s| {
            if fault == Fault::Refuse {
                s.epoch += 1;
            }
            if fault == Fault::Blackhole && s.fault != Fault::Blackhole {
                s.partitions += 1;
            }
            s.fault = fault;
        });
    }

    /// Ends a partition. With `reset`, the connections it swallowed end with
    /// a TCP reset (as when the far side's connection timed out); without,
    /// they stay black holes for good, as behind a NAT that forgot them,
    /// and only a peer's own timeout gets it out. New connections work.
    pub fn end_partition(&self, reset: bool) {
        self.state.send_modify(|s| {
            s.fault = Fault::None;
            if reset {
                s.epoch += 1;
            }
        });
    }

    /// Resets every open connection.
    pub fn reset(&self) {
        self.state.send_modify(|s| s.epoch += 1);
    }
}

impl Drop for ChaosProxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.reset();
    }
}

async fn accept_loop(listener: TcpListener, upstream: u16, state: Arc<watch::Sender<State>>) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        let now = *state.borrow();
        if now.fault == Fault::Refuse {
            abort(client);
            continue;
        }
        tokio::spawn(connection(client, upstream, state.subscribe(), now));
    }
}

/// Closes with a reset (`SO_LINGER` 0) rather than a clean FIN.
fn abort(stream: TcpStream) {
    let _ = stream.set_zero_linger();
    drop(stream);
}

async fn connection(
    mut client: TcpStream,
    upstream: u16,
    mut state: watch::Receiver<State>,
    opened: State,
) {
    let epoch = opened.epoch;
    if opened.fault == Fault::Blackhole {
        // Opened into a partition: swallow until it ends.
        swallow(client, state, epoch).await;
        return;
    }
    let connect = TcpStream::connect(("127.0.0.1", upstream));
    let Ok(Ok(mut server)) = tokio::time::timeout(Duration::from_secs(2), connect).await else {
        abort(client);
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let reset = {
        let (mut cr, mut cw) = client.split();
        let (mut sr, mut sw) = server.split();
        let (up_state, down_state) = (state.clone(), state.clone());
        let both = async {
            tokio::join!(
                pump(&mut cr, &mut sw, up_state, opened),
                pump(&mut sr, &mut cw, down_state, opened)
            )
        };
        let ended = async {
            while state.changed().await.is_ok() {
                if state.borrow().epoch != epoch {
                    return;
                }
            }
        };
        tokio::select! {
            (a, b) = both => a || b,
            () = ended => true,
        }
    };
    if reset {
        abort(client);
        abort(server);
    }
}

/// Copies `from` to `to` under the current fault until `from` ends (then
/// half-closes `to`); true if it stopped for a reset. Once a partition
/// began after the connection opened, it forwards nothing more.
async fn pump(
    from: &mut tokio::net::tcp::ReadHalf<'_>,
    to: &mut tokio::net::tcp::WriteHalf<'_>,
    state: watch::Receiver<State>,
    opened: State,
) -> bool {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let now = *state.borrow();
        if now.epoch != opened.epoch {
            return true;
        }
        if now.partitions != opened.partitions {
            continue;
        }
        match now.fault {
            Fault::Blackhole => continue,
            Fault::Delay(d) => tokio::time::sleep(d).await,
            Fault::None | Fault::Refuse => {}
        }
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
    false
}

async fn swallow(mut client: TcpStream, mut state: watch::Receiver<State>, epoch: u64) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        tokio::select! {
            read = client.read(&mut buf) => {
                if matches!(read, Ok(0) | Err(_)) {
                    return;
                }
            }
            changed = state.changed() => {
                if changed.is_err() || state.borrow().epoch != epoch {
                    abort(client);
                    return;
                }
            }
        }
    }
}
