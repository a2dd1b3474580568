//! The threads that read admitted results.
//!
//! tonic decodes a request's message in the task that serves the request.
//! A result of a hundred pairs is tens of thousands of varints and as many
//! allocations: decoded on the serving runtime, it held a thread that the
//! leases, heartbeats and registrations behind it waited for. A
//! `SubmitResult` the check lane admitted ([`crate::admission`]) is
//! therefore served, its message decoded and converted, on a small runtime
//! of its own whose threads lower their priority as the check threads do
//! ([`super::check_lane::CHECK_NICE`], [`lower_priority`]); the serving runtime's threads only
//! move its bytes off the connection. Since at most
//! [`super::CheckConfig::admitted`] results are admitted at once, the
//! messages these threads hold are bounded as before. A result's handling
//! runs to its end even if its client goes away meanwhile: what it
//! committed is then answered `DUPLICATE` to the resubmission, as a lost
//! answer always was.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

use super::check_lane::lower_priority;

/// The admitted results' runtime, started on first use; cheap to share
/// behind the check lane's `Arc`.
#[derive(Debug)]
pub struct ResultReaders {
    threads: usize,
    runtime: OnceLock<Option<Threads>>,
}

/// A runtime that may be dropped anywhere: an async context cannot drop a
/// runtime (it would block), so it is shut down in the background.
#[derive(Debug)]
struct Threads(Option<Runtime>);

impl Drop for Threads {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

impl ResultReaders {
    /// Readers on `threads` threads (at least one).
    pub fn new(threads: usize) -> Self {
        ResultReaders {
            threads: threads.max(1),
            runtime: OnceLock::new(),
        }
    }

    /// Runs `task` on the readers' threads; where they could not be started,
    /// on the caller's runtime, as every call is.
    pub fn spawn<F>(&self, task: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match self.runtime.get_or_init(|| self.start()) {
            Some(Threads(Some(runtime))) => runtime.spawn(task),
            _ => tokio::spawn(task),
        }
    }

    fn start(&self) -> Option<Threads> {
        let built = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(self.threads)
            .thread_name("xq-read-result")
            .on_thread_start(|| lower_priority("a result reader"))
            .enable_all()
            .build();
        match built {
            Ok(runtime) => Some(Threads(Some(runtime))),
            Err(e) => {
                tracing::error!(error = %e, "no threads for results: they are read with the rest");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tasks_run_on_the_readers_threads_and_the_readers_drop_inside_a_runtime() {
        let readers = ResultReaders::new(2);
        let name = readers
            .spawn(async { std::thread::current().name().map(str::to_owned) })
            .await
            .unwrap();
        assert_eq!(name.as_deref(), Some("xq-read-result"));
        drop(readers);
    }
}
