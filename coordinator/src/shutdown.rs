//! Graceful shutdown as a value: the server's `shutdown` future is turned
//! into a [`Shutdown`] that long-lived tasks (the `WatchRun` streams) can
//! poll or await, so a stopping server does not wait for clients that would
//! otherwise keep a stream open forever.

use std::future::Future;

use tokio::sync::watch;

/// A cloneable view of "has shutdown begun".
#[derive(Debug, Clone)]
pub struct Shutdown {
    rx: watch::Receiver<bool>,
}

impl Shutdown {
    /// A signal and the future that fires it once `trigger` completes.
    pub fn new(trigger: impl Future<Output = ()>) -> (Self, impl Future<Output = ()>) {
        let (tx, rx) = watch::channel(false);
        let fire = async move {
            trigger.await;
            let _ = tx.send(true);
        };
        (Shutdown { rx }, fire)
    }

    pub fn is_shutdown(&self) -> bool {
        *self.rx.borrow()
    }

    /// Completes once shutdown has begun (or the signal was dropped).
    pub async fn recv(&mut self) {
        let _ = self.rx.wait_for(|s| *s).await;
    }
}
