//! The store's path of one counted result, per run kind, timed: the run's
//! totals added, the run read back, its kind's `apply`, and what the kind
//! returned written ([`runs::save_effects`]). Ignored by default; run it
//! with `cargo test -p xq-coordinator --lib progress_write -- --ignored
//! --nocapture` (the dev profile is optimized). It uses only store and kind
//! functions whose signatures issue 48 kept, so the same test measures the
//! code before and after it (it was `coordinator/tests/progress_write.rs`
//! until the store's modules became private to the crate).

use std::time::Instant;

use rusqlite::Connection;
use xq_proto::variant_stats::VariantStats;
use xq_proto::{BatchOutcome, Pentanomial, Totals, Wdl};

use crate::runs::{Lease, LeaseState, Registry, RunSpec, RunState, Slice};
use crate::store::migrations;
use crate::store::runs::{self, Cause};

const SETTINGS: &str = r#""settings":{"limit":{"nodes":200},"hash_mb":1,"rules":"standard",
    "openings":{"builtin":{"random_plies":4}},"seed":1,"adjudication":{"resign_cp":1000,
    "resign_moves":4,"draw_cp":10,"draw_moves":8,"draw_after_move":40,"max_plies":80},
    "draw_contempt":true}"#;

fn spec(kind: &str) -> RunSpec {
    let kind = match kind {
        "sprt" => r#"{"sprt":{"dev_params":{},"base_params":{},"sprt":{"elo0":0.0,"elo1":5.0,
            "alpha":0.05,"beta":0.05,"model":"normalized"},"max_pairs":null}}"#
            .to_owned(),
        "spsa" => r#"{"spsa":{"params":[{"name":"advisor_value","start":300.0,"min":20.0,
            "max":500.0,"c_end":15.0,"r_end":0.0025,"integer":true},{"name":"cannon_value",
            "start":300.0,"min":100.0,"max":900.0,"c_end":25.0,"r_end":0.0025,"integer":true}],
            "games":20000000}}"#
            .to_owned(),
        "games" => r#"{"games":{"dev_params":{},"base_params":{},"pairs":100000000}}"#.to_owned(),
        "datagen" => r#"{"datagen":{"engine":null,"params":{},"pairs":100000000}}"#.to_owned(),
        variants => {
            let n: usize = variants.trim_start_matches("variants").parse().unwrap();
            // Two rule sets over and over: the stored form's size is what
            // is measured.
            let rules: Vec<&str> = ["\"standard\"", "\"standard+conversion\""]
                .into_iter()
                .cycle()
                .take(n)
                .collect();
            format!(
                r#"{{"variants":{{"rules":[{}],"params":{{}},"pairs":100000000}}}}"#,
                rules.join(",")
            )
        }
    };
    let json =
        format!(r#"{{"name":"bench","priority":0,"batch_pairs":4,{SETTINGS},"kind":{kind}}}"#);
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{json}: {e}"))
}

fn outcome() -> BatchOutcome {
    let mut stats = VariantStats {
        red_wins: 3,
        draws: 3,
        black_wins: 2,
        ..Default::default()
    };
    stats.pair_outcomes[4] = 4;
    stats.plies_histogram[3] = 8;
    BatchOutcome {
        totals: Totals {
            pairs: 4,
            pentanomial: Pentanomial([0, 1, 2, 1, 0]),
            wdl: Wdl {
                wins: 3,
                draws: 3,
                losses: 2,
            },
            reasons: [("checkmate".to_owned(), 5), ("adjudication".to_owned(), 3)].into(),
            total_plies: 640,
        },
        variant: Some(stats),
        ..BatchOutcome::default()
    }
}

/// Microseconds per counted result of a run of `kind`, over `n` results.
fn time_results(kind: &str, n: u64) -> f64 {
    let path = std::env::temp_dir().join(format!("xq-progress-{}-{kind}.db", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut conn = Connection::open(&path).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.pragma_update(None, "synchronous", "NORMAL").unwrap();
    migrations::migrate(&mut conn).unwrap();
    let mut spec = spec(kind);
    let initial = spec
        .kind
        .ops_mut()
        .prepare(&Registry::new(), &spec.settings.clone())
        .unwrap();
    let id = runs::insert(&conn, &spec, None, RunState::Active, 1).unwrap();
    runs::save_effects(&conn, id, None, initial, 1).unwrap();
    conn.execute(
        "INSERT INTO workers (id, name, threads, version, signature, registered_ms, last_seen_ms)
         VALUES (1, 'w', 1, '0.1.0', 1, 1, 1)",
        [],
    )
    .unwrap();
    let variants = spec.kind.ops().variants().len().max(1);
    let outcome = outcome();
    let mut spent = 0.0;
    for i in 0..n {
        // The lease as it was handed out (not timed: not the result's path).
        let run = runs::load(&conn, id).unwrap();
        let slice = Slice {
            offset: i * 4,
            pairs: 4,
            variant: (variants > 1).then_some(i as usize % variants),
        };
        let work = run.spec.kind.ops().slice_work(&run, &slice).unwrap();
        conn.execute(
            "INSERT INTO leases (id, run_id, worker_id, state, opening_offset, pairs, variant,
                                 created_ms, deadline_ms)
             VALUES (?1, ?2, 1, 'done', ?3, 4, ?4, 1, 2)",
            rusqlite::params![
                (i + 1) as i64,
                id as i64,
                slice.offset as i64,
                slice.variant.map(|v| v as i64)
            ],
        )
        .unwrap();
        let lease = Lease {
            id: i + 1,
            run_id: id,
            worker_id: 1,
            state: LeaseState::Done,
            opening_offset: slice.offset,
            pairs: 4,
            spsa_request: work.spsa_request,
            created_ms: 1,
            deadline_ms: 2,
            variant: slice.variant,
        };
        let start = Instant::now();
        let tx = conn.transaction().unwrap();
        runs::add_totals(&tx, id, &outcome.totals, 2).unwrap();
        let run = runs::load(&tx, id).unwrap();
        let applied = run.spec.kind.ops().apply(&run, &lease, &outcome).unwrap();
        let cause = Cause {
            lease_id: lease.id,
            run_pairs: run.totals.pairs,
            result: &outcome.totals,
        };
        runs::save_effects(&tx, id, Some(cause), applied.effects, 2).unwrap();
        tx.commit().unwrap();
        spent += start.elapsed().as_secs_f64();
    }
    drop(conn);
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.clone().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
    spent * 1e6 / n as f64
}

#[test]
#[ignore = "a measurement; run it with --ignored --nocapture"]
fn the_store_path_of_a_counted_result_per_kind() {
    let n: u64 = std::env::var("XQ_PROGRESS_RESULTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    for kind in [
        "sprt",
        "spsa",
        "games",
        "datagen",
        "variants2",
        "variants16",
    ] {
        // Best of three, to be less at the mercy of a shared machine.
        let best = (0..3)
            .map(|_| time_results(kind, n))
            .fold(f64::INFINITY, f64::min);
        println!("{kind:>10}: {best:8.1} µs per result (best of 3 × {n})");
    }
}
