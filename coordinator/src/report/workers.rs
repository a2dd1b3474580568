//! The per-worker health table of a run (`status RUN`, `report`, the web
//! view): each worker's pairs, pentanomial, residual, failure rates and flag.

use serde_json::{Value, json};
use xq_proto::pb;

fn rate(n: u64, games: u64) -> f64 {
    if games == 0 {
        0.0
    } else {
        n as f64 / games as f64
    }
}

/// One line per worker under a header; a line saying so without results.
pub fn text(workers: &[pb::WorkerHealth]) -> String {
    if workers.is_empty() {
        return "  workers      no per-worker results stored\n".to_owned();
    }
    let mut out = String::from(
        "  workers      id name             pairs pentanomial                    residual time-loss crash  flag\n",
    );
    for w in workers {
        let games = w.pairs.saturating_mul(2);
        let residual = w
            .residual
            .map_or_else(|| "-".to_owned(), |r| format!("{r:.2}"));
        let flag = match (w.excluded, w.flag.as_str()) {
            (true, why) => format!("EXCLUDED: {why}"),
            (false, "") => String::new(),
            (false, why) => format!("FLAGGED: {why}"),
        };
        out += &format!(
            "    {:>10} {:<16} {:>5} {:<30} {:>8} {:>8.1}% {:>5.1}%  {}\n",
            w.worker_id,
            w.worker_name,
            w.pairs,
            format!("{:?}", w.pentanomial),
            residual,
            100.0 * rate(w.time_losses, games),
            100.0 * rate(w.crashes, games),
            flag
        );
    }
    out
}

/// The table as a JSON array (`report --json`'s `workers`).
pub fn json(workers: &[pb::WorkerHealth]) -> Value {
    Value::Array(
        workers
            .iter()
            .map(|w| {
                let games = w.pairs.saturating_mul(2);
                json!({
                    "worker_id": w.worker_id,
                    "name": w.worker_name,
                    "leases": w.leases,
                    "pairs": w.pairs,
                    "pentanomial": w.pentanomial,
                    "residual": w.residual,
                    "time_losses": w.time_losses,
                    "time_loss_rate": rate(w.time_losses, games),
                    "crashes": w.crashes,
                    "crash_rate": rate(w.crashes, games),
                    "flag": (!w.flag.is_empty()).then_some(&w.flag),
                    "excluded": w.excluded,
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(id: u64, flag: &str, excluded: bool) -> pb::WorkerHealth {
        pb::WorkerHealth {
            worker_id: id,
            worker_name: format!("w{id}"),
            leases: 2,
            pairs: 50,
            pentanomial: vec![1, 10, 28, 10, 1],
            time_losses: 5,
            crashes: 1,
            residual: Some(0.5),
            flag: flag.to_owned(),
            excluded,
        }
    }

    #[test]
    fn flags_exclusions_and_rates_are_shown() {
        let ws = [
            worker(1, "", false),
            worker(2, "residual 9.1", false),
            worker(3, "residual 9.1", true),
        ];
        let t = text(&ws);
        assert!(t.contains("FLAGGED: residual 9.1"), "{t}");
        assert!(t.contains("EXCLUDED: residual 9.1"), "{t}");
        assert!(t.contains(" 5.0%"), "time losses of 100 games: {t}");
        let j = json(&ws);
        assert_eq!(j[0]["flag"], Value::Null);
        assert_eq!(j[2]["excluded"], true);
        assert_eq!(j[1]["time_loss_rate"], 0.05);
        assert!(text(&[]).contains("no per-worker results"));
    }
}
