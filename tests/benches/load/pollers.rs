//! Browsers on the run page: each fetches the run's live part every 2 s
//! (± 50 %) with the last ETag in `If-None-Match`, as the page's script does.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rand::Rng;

#[derive(Debug, Default)]
pub struct Polls {
    /// Latency of every poll, µs.
    pub latency: Vec<u32>,
    pub statuses: BTreeMap<u16, u64>,
}

impl Polls {
    pub fn add(&mut self, other: Polls) {
        self.latency.extend(other.latency);
        for (k, v) in other.statuses {
            *self.statuses.entry(k).or_default() += v;
        }
    }
}

/// One browser on `url` until `end`.
pub async fn poller(url: String, end: Instant) -> Polls {
    let mut polls = Polls::default();
    let jitter = || Duration::from_millis(rand::rng().random_range(1000..3000));
    tokio::time::sleep(jitter()).await;
    let mut etag = String::new();
    while Instant::now() < end {
        let started = Instant::now();
        let headers: Vec<(&str, &str)> = if etag.is_empty() {
            Vec::new()
        } else {
            vec![("if-none-match", etag.as_str())]
        };
        let answer = xq_tests::web::request(http::Method::GET, &url, &headers, "").await;
        let micros = started.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
        polls.latency.push(micros);
        *polls.statuses.entry(answer.status.as_u16()).or_default() += 1;
        if let Some(tag) = answer.headers.get("etag").and_then(|v| v.to_str().ok()) {
            etag = tag.to_owned();
        }
        tokio::time::sleep(jitter()).await;
    }
    polls
}
