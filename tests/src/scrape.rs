//! A coordinator's own account of a load bench's window: its `/metrics` histograms
//! read at the window's start and end, so the report can say where a call's
//! time went on the server (until its response, waiting for the writer
//! thread, in the writer's batches) apart from the time it spent on the
//! way or in the clients.

use std::collections::BTreeMap;

use anyhow::{Context, ensure};

/// Cumulative bucket counts `(upper bound in seconds, count)` in rising
/// order, by series: the histogram's name and its labels other than `le`
/// (`xq_store_wait_seconds{lane="control"}`).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Histograms(BTreeMap<String, Vec<(f64, u64)>>);

/// The series the report prints, and what each measures.
pub const SERIES: [(&str, &str); 8] = [
    (
        "xq_request_duration_seconds{protocol=\"grpc\",method=\"RequestWork\"}",
        "RequestWork in the server",
    ),
    (
        "xq_request_duration_seconds{protocol=\"grpc\",method=\"Heartbeat\"}",
        "Heartbeat in the server",
    ),
    (
        "xq_request_duration_seconds{protocol=\"grpc\",method=\"SubmitResult\"}",
        "SubmitResult in the server",
    ),
    (
        "xq_store_wait_seconds{lane=\"control\"}",
        "writer wait, control lane",
    ),
    (
        "xq_store_call_seconds{lane=\"control\"}",
        "writer answer, control lane",
    ),
    (
        "xq_store_wait_seconds{lane=\"bulk\"}",
        "writer wait, bulk lane",
    ),
    (
        "xq_store_call_seconds{lane=\"bulk\"}",
        "writer answer, bulk lane",
    ),
    ("xq_store_batch_seconds", "writer batch"),
];

impl Histograms {
    /// The histograms `/metrics` at `web` exports now.
    pub async fn fetch(web: &str) -> anyhow::Result<Histograms> {
        let answer = crate::web::get(&format!("{web}/metrics")).await;
        ensure!(
            answer.status.is_success(),
            "/metrics answered {}",
            answer.status
        );
        Histograms::parse(&answer.body)
    }

    /// Reads the `_bucket` lines of a Prometheus or OpenMetrics text.
    pub fn parse(text: &str) -> anyhow::Result<Histograms> {
        let mut series: BTreeMap<String, Vec<(f64, u64)>> = BTreeMap::new();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let Some((name, rest)) = line.split_once("_bucket{") else {
                continue;
            };
            let (labels, value) = rest
                .rsplit_once("} ")
                .with_context(|| format!("a bucket line without a value: {line:.80}"))?;
            let mut le = None;
            let mut others = Vec::new();
            for label in labels.split(',') {
                match label.strip_prefix("le=") {
                    Some(bound) => le = Some(bound.trim_matches('"')),
                    None => others.push(label),
                }
            }
            let le = le.with_context(|| format!("a bucket line without le: {line:.80}"))?;
            let bound = match le {
                "+Inf" => f64::INFINITY,
                b => b.parse().with_context(|| format!("bucket bound {b:.20}"))?,
            };
            let count = value
                .trim()
                .parse::<f64>()
                .with_context(|| format!("bucket count {value:.20}"))?
                as u64;
            let key = match others.is_empty() {
                true => name.to_owned(),
                false => format!("{name}{{{}}}", others.join(",")),
            };
            series.entry(key).or_default().push((bound, count));
        }
        for buckets in series.values_mut() {
            buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        Ok(Histograms(series))
    }

    /// What was observed after `earlier` was read.
    pub fn since(&self, earlier: &Histograms) -> Histograms {
        let diff = self
            .0
            .iter()
            .map(|(key, buckets)| {
                let before = earlier.0.get(key);
                let buckets = buckets
                    .iter()
                    .enumerate()
                    .map(|(i, &(bound, n))| {
                        let was = before.and_then(|b| b.get(i)).map_or(0, |b| b.1);
                        (bound, n.saturating_sub(was))
                    })
                    .collect();
                (key.clone(), buckets)
            })
            .collect();
        Histograms(diff)
    }

    /// The observations of `series`, and the upper bound of the bucket that
    /// holds its quantile `q` (so a p99 of "≤ 0.0512 s"); `None` if nothing
    /// was observed.
    pub fn quantile(&self, series: &str, q: f64) -> Option<(u64, f64)> {
        let buckets = self.0.get(series)?;
        let total = buckets.last()?.1;
        if total == 0 {
            return None;
        }
        let rank = (q * total as f64).ceil().max(1.0) as u64;
        let bound = buckets.iter().find(|b| b.1 >= rank)?.0;
        Some((total, bound))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "# TYPE xq_store_wait_seconds histogram
xq_store_wait_seconds_bucket{lane=\"control\",le=\"0.001\"} 10
xq_store_wait_seconds_bucket{lane=\"control\",le=\"0.01\"} 10
xq_store_wait_seconds_bucket{lane=\"control\",le=\"+Inf\"} 10
xq_store_batch_seconds_bucket{le=\"0.001\"} 1
xq_store_batch_seconds_bucket{le=\"+Inf\"} 1
";
    const AFTER: &str = "xq_store_wait_seconds_bucket{lane=\"control\",le=\"0.001\"} 15
xq_store_wait_seconds_bucket{lane=\"control\",le=\"0.01\"} 109
xq_store_wait_seconds_bucket{lane=\"control\",le=\"+Inf\"} 110
xq_store_wait_seconds_sum{lane=\"control\"} 3.5
xq_store_batch_seconds_bucket{le=\"0.001\"} 1
xq_store_batch_seconds_bucket{le=\"+Inf\"} 1
";

    #[test]
    fn the_windows_quantiles_come_from_the_difference_of_two_scrapes() {
        let window = Histograms::parse(AFTER)
            .unwrap()
            .since(&Histograms::parse(BEFORE).unwrap());
        let control = "xq_store_wait_seconds{lane=\"control\"}";
        assert_eq!(window.quantile(control, 0.05), Some((100, 0.001)));
        assert_eq!(window.quantile(control, 0.5), Some((100, 0.01)));
        assert_eq!(window.quantile(control, 0.99), Some((100, 0.01)));
        assert_eq!(window.quantile(control, 1.0), Some((100, f64::INFINITY)));
        assert_eq!(window.quantile("xq_store_batch_seconds", 0.99), None);
        assert!(Histograms::parse("x_bucket{le=\"0.1\"}").is_err());
    }
}
