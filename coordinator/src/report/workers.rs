//! The per-worker health table of a run (`status RUN`, `report`, the web
//! view): each worker's pairs, pentanomial, residual, failure rates and flag,
//! and what it plays with: cores, memory, games at once, its speed with the
//! run's base engine, the factor its time limits were scaled by, and the
//! engine builds its machine played.

use serde_json::{Value, json};
use xq_proto::pb;

fn rate(n: u64, games: u64) -> f64 {
    if games == 0 {
        0.0
    } else {
        n as f64 / games as f64
    }
}

/// How many of the workers seen lately can serve the run.
pub fn serving(able: u32, active: u32) -> String {
    format!(
        "  serving      {able} of the {active} workers seen in the last ten minutes can serve this run\n"
    )
}

/// One line per worker under a header; a line saying so without results.
pub fn text(workers: &[pb::WorkerHealth]) -> String {
    if workers.is_empty() {
        return "  workers      no per-worker results stored\n".to_owned();
    }
    let mut out = String::from(
        "  workers      id name             pairs pentanomial                    residual time-loss crash cores memory games       nps factor  build              flag\n",
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
        let dash = |shown: bool, text: String| if shown { text } else { "-".to_owned() };
        out += &format!(
            "    {:>10} {:<16} {:>5} {:<30} {:>8} {:>8.1}% {:>5.1}% {:>5} {:>6} {:>5} {:>9} {:>6}  {:<18} {}\n",
            w.worker_id,
            w.worker_name,
            w.pairs,
            format!("{:?}", w.pentanomial),
            residual,
            100.0 * rate(w.time_losses, games),
            100.0 * rate(w.crashes, games),
            dash(w.cores > 0, w.cores.to_string()),
            dash(
                w.memory_mib > 0,
                format!("{}G", w.memory_mib.div_ceil(1024))
            ),
            dash(w.cores > 0, w.games_at_once.to_string()),
            dash(w.engine_nps > 0, w.engine_nps.to_string()),
            dash(w.time_factor > 0.0, format!("{:.2}", w.time_factor)),
            dash(!w.builds.is_empty(), w.builds.join(", ")),
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
                    "cores": (w.cores > 0).then_some(w.cores),
                    "memory_mib": (w.memory_mib > 0).then_some(w.memory_mib),
                    "games_at_once": (w.cores > 0).then_some(w.games_at_once),
                    "engine_nps": (w.engine_nps > 0).then_some(w.engine_nps),
                    "time_factor": (w.time_factor > 0.0).then_some(w.time_factor),
                    "builds": w.builds,
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
            engine_nps: 400_000,
            time_factor: 2.5,
            games_at_once: 3,
            cores: 6,
            memory_mib: 16_384,
            builds: vec!["x86-64-avx2 / -".to_owned()],
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
        assert!(t.contains(" x86-64-avx2 / -  "), "the builds played: {t}");
        let j = json(&ws);
        assert_eq!(j[0]["flag"], Value::Null);
        assert_eq!(j[2]["excluded"], true);
        assert_eq!(j[1]["time_loss_rate"], 0.05);
        assert_eq!(j[0]["builds"][0], "x86-64-avx2 / -");
        assert!(text(&[]).contains("no per-worker results"));
        assert!(serving(1, 3).contains("1 of the 3 workers"));
    }

    #[test]
    fn what_a_worker_plays_with_is_shown_and_unknowns_are_dashes() {
        let mut ws = [worker(1, "", false), worker(2, "", false)];
        let t = text(&ws);
        assert!(t.contains("     6    16G     3    400000   2.50"), "{t}");
        ws[1].engine_nps = 0;
        ws[1].time_factor = 0.0;
        let j = json(&ws);
        assert_eq!(j[0]["games_at_once"], 3);
        assert_eq!(j[0]["time_factor"], 2.5);
        assert_eq!(j[1]["engine_nps"], Value::Null);
        assert!(
            text(&ws)
                .lines()
                .last()
                .unwrap()
                .contains("        -      -")
        );
    }
}
