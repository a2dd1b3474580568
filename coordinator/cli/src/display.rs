//! How runs are shown: one-line status, the indicatif watcher, the final
//! report (text, JSON, SPSA history table or CSV).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use xq_coordinator::report::summary::{
    DatagenSummary, keep_games, kind, kind_spec, run_kind, sprt_state,
};
pub use xq_coordinator::report::summary::{json as summary_json, state};
use xq_coordinator::runs::RunKind;
use xq_coordinator::runs::change::DEFAULT_SHARE;
use xq_coordinator::runs::spsa::paste_back;
use xq_proto::connect::Auth;
use xq_proto::pb::run_service_client::RunServiceClient;
use xq_proto::{Retention, pb};

/// The admin client type.
pub type Admin = RunServiceClient<tonic::service::interceptor::InterceptedService<Channel, Auth>>;

/// `W/D/L 10/20/5  LLR 1.23 [-2.94, 2.94]  Elo 12.3 ± 5.0` or `θ x=1.2 …`.
pub fn progress_line(s: &pb::RunStatus) -> String {
    let t = s.totals.clone().unwrap_or_default();
    let mut line = format!("W/D/L {}/{}/{}", t.wins, t.draws, t.losses);
    if let Some(sprt) = &s.sprt {
        line += &format!(
            "  LLR {:.2} [{:.2}, {:.2}] {}",
            sprt.llr,
            sprt.lower_bound,
            sprt.upper_bound,
            sprt_state(sprt)
        );
    }
    if let Some(spsa) = &s.spsa {
        line += "  θ";
        for p in &spsa.theta {
            line += &format!(" {}={:.2}", p.name, p.value);
        }
    } else if let Some(e) = &s.elo {
        line += &format!("  Elo {:.1} ± {:.1}", e.elo, e.elo95);
    }
    line
}

/// One line per run for `status`.
pub fn status_line(s: &pb::RunStatus) -> String {
    let t = s.totals.clone().unwrap_or_default();
    let target = match s.target_pairs {
        0 => "∞".to_owned(),
        p => (2 * p).to_string(),
    };
    format!(
        "{:>4}  {:<5} {:<8} {:<16} games {}/{} (in flight {})  {}",
        s.run_id,
        kind(s),
        state(s),
        s.spec.as_ref().map_or("", |sp| sp.name.as_str()),
        2 * t.pairs,
        target,
        2 * s.pairs_in_flight,
        progress_line(s)
    ) + &keep_suffix(s)
        + &requires_suffix(s)
        + &schedule_suffix(s)
        + &super::sources::suffix(s)
        + &flag_suffix(s)
        + &author_suffix(s)
}

/// `  priority P` and `  share S` where they are not the defaults (0, 100).
fn schedule_suffix(s: &pb::RunStatus) -> String {
    let mut out = String::new();
    let priority = s.spec.as_ref().map_or(0, |sp| sp.priority);
    if priority != 0 {
        out += &format!("  priority {priority}");
    }
    if s.share != DEFAULT_SHARE {
        out += &format!("  share {}", s.share);
    }
    out
}

/// `  by NAME` for a run with an author, and a rejection's reason.
fn author_suffix(s: &pb::RunStatus) -> String {
    let by = match s.author.as_str() {
        "" => String::new(),
        name => format!("  by {name}"),
    };
    match s.rejection.as_str() {
        "" => by,
        why => format!("{by}  [rejected: {why}]"),
    }
}

/// `  keeps decisive games` for a run that does not keep every game.
fn keep_suffix(s: &pb::RunStatus) -> String {
    match keep_games(s) {
        Retention::All => String::new(),
        Retention::None => "  keeps no games".to_owned(),
        r => format!("  keeps {r} games"),
    }
}

/// The instruction-set flags a run requires of its workers' machines,
/// comma-separated; empty when it requires none.
fn required_flags(s: &pb::RunStatus) -> String {
    s.spec
        .as_ref()
        .and_then(|sp| sp.workers.as_ref())
        .map_or_else(String::new, |w| w.require_flags.join(","))
}

/// `  requires avx2,bmi2` for a run that requires flags of its workers.
fn requires_suffix(s: &pb::RunStatus) -> String {
    match required_flags(s) {
        flags if flags.is_empty() => String::new(),
        flags => format!("  requires {flags}"),
    }
}

/// `  [stopped: <why>]` for a run the system stopped; empty otherwise.
fn flag_suffix(s: &pb::RunStatus) -> String {
    if s.flag.is_empty() {
        String::new()
    } else {
        format!("  [stopped: {}]", s.flag)
    }
}

/// How often, at most, progress is printed as a plain line when standard
/// error is not a terminal (a log file, CI), where the bar is not drawn.
const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// When to print progress as plain lines: the first status with games,
/// then whenever the games moved and [`PLAIN_EVERY`] has passed.
#[derive(Debug, Default)]
struct PlainProgress {
    /// When the last line was printed, and its games.
    printed: Option<(Instant, u64)>,
}

impl PlainProgress {
    /// Whether a status with `games` at `now` gets a line (and records it).
    fn due(&mut self, games: u64, now: Instant) -> bool {
        let due = match self.printed {
            None => games > 0,
            Some((at, shown)) => games != shown && now.duration_since(at) >= PLAIN_EVERY,
        };
        if due {
            self.printed = Some((now, games));
        }
        due
    }
}

/// Follows a run with a progress bar (on stderr) until it ends or the
/// stream closes; returns the last status. Without a terminal the bar is
/// not drawn, and progress goes to stderr as a plain line at most every
/// [`PLAIN_EVERY`].
pub async fn watch(admin: &mut Admin, run_id: u64) -> anyhow::Result<pb::RunStatus> {
    let mut stream = admin
        .watch_run(pb::WatchRunRequest { run_id })
        .await?
        .into_inner();
    let bar = ProgressBar::new(0);
    let mut plain = (!std::io::stderr().is_terminal()).then(PlainProgress::default);
    let mut last = None;
    while let Some(status) = stream.next().await {
        let status = status?;
        let games = 2 * status.totals.as_ref().map_or(0, |t| t.pairs);
        if status.target_pairs > 0 {
            bar.set_length(2 * status.target_pairs);
            bar.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} games  {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
        } else {
            bar.set_style(
                ProgressStyle::with_template("{spinner} {pos} games  {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
        }
        let line = progress_line(&status);
        bar.set_position(games);
        if let Some(plain) = &mut plain
            && plain.due(games, Instant::now())
        {
            let of = match status.target_pairs {
                0 => String::new(),
                pairs => format!("/{}", 2 * pairs),
            };
            eprintln!("{games}{of} games  {line}");
        }
        bar.set_message(line);
        last = Some(status);
    }
    bar.finish();
    last.ok_or_else(|| anyhow::anyhow!("the coordinator sent no status for run {run_id}"))
}

/// The failures among a run's stored games, per worker and per player
/// (engine): `  failures     w1: dev time-forfeit 2 (overrun median 12 ms,
/// max 40 ms), base resignation 1`.
pub fn failures(s: &pb::RunStatus, failures: &[pb::FailureCount]) -> String {
    if failures.is_empty() {
        return "  failures     none among the stored games\n".to_owned();
    }
    let names = run_kind(s).map_or(["dev", "base"], RunKind::player_names);
    let player = |p: u32| names[usize::from(p != 0)];
    let line = |p: u32, reason: &str, games: u64, overruns: &[u64]| {
        format!("{} {reason} {games}{}", player(p), overrun_note(overruns))
    };
    let mut by_worker: Vec<(String, Vec<String>)> = Vec::new();
    let mut by_player: std::collections::BTreeMap<(u32, &str), (u64, Vec<u64>)> =
        Default::default();
    for f in failures {
        let text = line(f.loser, &f.reason, f.games, &f.overruns_ms);
        let name = format!("{} (#{})", f.worker_name, f.worker_id);
        match by_worker.last_mut() {
            Some((n, lines)) if *n == name => lines.push(text),
            _ => by_worker.push((name, vec![text])),
        }
        let (games, overruns) = by_player.entry((f.loser, f.reason.as_str())).or_default();
        *games += f.games;
        overruns.extend(&f.overruns_ms);
    }
    let mut out = String::from("  failures     by worker:\n");
    for (name, lines) in by_worker {
        out += &format!("    {name}: {}\n", lines.join(", "));
    }
    let totals: Vec<String> = by_player
        .into_iter()
        .map(|((p, r), (n, mut overruns))| {
            overruns.sort_unstable();
            line(p, r, n, &overruns)
        })
        .collect();
    out += &format!("    by engine: {}\n", totals.join(", "));
    out
}

/// ` (overrun median M ms, max X ms)` of ascending overruns; empty for none.
fn overrun_note(sorted_ms: &[u64]) -> String {
    let (Some(max), n) = (sorted_ms.last(), sorted_ms.len()) else {
        return String::new();
    };
    let median = if n % 2 == 1 {
        sorted_ms[n / 2] as f64
    } else {
        (sorted_ms[n / 2 - 1] + sorted_ms[n / 2]) as f64 / 2.0
    };
    format!(" (overrun median {median} ms, max {max} ms)")
}

/// A datagen run's own lines: positions played and their rate, Red's
/// results, the export.
fn datagen_lines(s: &pb::RunStatus) -> String {
    let (Some(v), Some(d)) = (s.variants.first(), DatagenSummary::of(s)) else {
        return String::new();
    };
    let r = v.stats.clone().unwrap_or_default();
    let rate = d
        .positions_per_second
        .map_or_else(|| "-".to_owned(), |p| format!("{p:.0}"));
    format!(
        "  positions    {} (plies played), {rate} per second\n  results      {}/{}/{} (Red wins/draws/Black wins)\n  \
         export       xq-coordinator datagen-export {} --format text|bin --out FILE\n",
        d.positions, r.red_wins, r.draws, r.black_wins, s.run_id
    )
}

/// A human summary of a run.
pub fn summary_text(s: &pb::RunStatus) -> String {
    let t = s.totals.clone().unwrap_or_default();
    let mut out = format!(
        "run {} ({}, {}): {} games\n  W/D/L        {}/{}/{}\n  pentanomial  {:?}\n",
        s.run_id,
        kind(s),
        state(s),
        2 * t.pairs,
        t.wins,
        t.draws,
        t.losses,
        t.pentanomial
    );
    out += &format!("  games kept   {}\n", keep_games(s));
    let flags = required_flags(s);
    if !flags.is_empty() {
        out += &format!("  requires     {flags} (workers' CPU flags)\n");
    }
    out += &super::sources::engines(s);
    if !s.flag.is_empty() {
        out += &format!("  stopped by the system: {}\n", s.flag);
    }
    let datagen = run_kind(s) == Some(RunKind::Datagen);
    if datagen {
        out += &datagen_lines(s);
    }
    if let Some(e) = s.elo.as_ref().filter(|_| !datagen) {
        out += &format!(
            "  Elo          {:.2} ± {:.2} (LOS {:.1} %)\n",
            e.elo,
            e.elo95,
            100.0 * e.los
        );
    }
    if let Some(sprt) = &s.sprt {
        out += &format!(
            "  SPRT         {}  LLR {:.3} [{:.3}, {:.3}]\n",
            sprt_state(sprt),
            sprt.llr,
            sprt.lower_bound,
            sprt.upper_bound
        );
    }
    if let Some(spsa) = &s.spsa {
        out += &format!(
            "  SPSA         {}/{} iterations\n",
            spsa.iter, spsa.iterations
        );
        for p in &spsa.theta {
            out += &format!("    {:<24} {:.3}\n", p.name, p.value);
        }
        if let Some(kind) = kind_spec(s) {
            let engine = kind.ops().engines().first().copied().unwrap_or("built-in");
            out += &format!(
                "  engine       {engine}, {} pairs per iteration\n",
                s.spec.as_ref().map_or(0, |sp| sp.batch_pairs)
            );
            let theta: Vec<f64> = spsa.theta.iter().map(|p| p.value).collect();
            out += "  values (name, type, value, min, max, c_end, r_end):\n";
            for line in paste_back(kind.ops().tuned(), &theta).lines() {
                out += &format!("    {line}\n");
            }
        }
    }
    if s.linked_run_id != 0 {
        let role = if s.spsa.is_some() {
            "verified by"
        } else {
            "verifies tune"
        };
        out += &format!("  {role:<12} run {}\n", s.linked_run_id);
    }
    if !t.reasons.is_empty() {
        let mut reasons: Vec<_> = t.reasons.iter().collect();
        reasons.sort();
        out += "  end reasons ";
        for (r, n) in reasons {
            out += &format!(" {r}={n}");
        }
        out += "\n";
    }
    out
}

/// The SPSA history as a table or CSV (`lease_id,iter,wins,draws,losses,<params>`).
pub fn history(s: &pb::RunStatus, rows: &[pb::SpsaHistoryRow], csv: bool) -> String {
    let names: Vec<&str> = s
        .spsa
        .as_ref()
        .map(|sp| sp.theta.iter().map(|p| p.name.as_str()).collect())
        .unwrap_or_default();
    let mut out = String::new();
    if csv {
        out += &format!("lease_id,iter,wins,draws,losses,{}\n", names.join(","));
        for r in rows {
            let theta: Vec<String> = r.theta.iter().map(|v| v.to_string()).collect();
            out += &format!(
                "{},{},{},{},{},{}\n",
                r.lease_id,
                r.iter,
                r.wins,
                r.draws,
                r.losses,
                theta.join(",")
            );
        }
    } else {
        out += &format!("{:>8} {:>8} {:>9}", "iter", "lease", "W/D/L");
        for n in &names {
            out += &format!(" {n:>14}");
        }
        out += "\n";
        for r in rows {
            out += &format!(
                "{:>8} {:>8} {:>9}",
                r.iter,
                r.lease_id,
                format!("{}/{}/{}", r.wins, r.draws, r.losses)
            );
            for v in &r.theta {
                out += &format!(" {v:>14.3}");
            }
            out += "\n";
        }
    }
    out
}

/// The outcome of a tune with `--verify` in one line, from the tune and its
/// verification SPRT (once started); `None` for a tune without `--verify`.
pub fn verdict(tune: &pb::RunStatus, verify: Option<&pb::RunStatus>) -> Option<String> {
    let kind = kind_spec(tune)?;
    let bounds = kind.ops().verification()?;
    let Some(v) = verify else {
        return Some(match tune.state() {
            pb::RunState::Active => format!(
                "tuning; an SPRT [{}, {}] of the tuned values follows",
                bounds.elo0(),
                bounds.elo1()
            ),
            _ => "tune ended before its last iteration; no verification".to_owned(),
        });
    };
    let elo = v.elo.as_ref().map_or("no games yet".to_owned(), |e| {
        format!("{:+.1} ± {:.1} Elo", e.elo, e.elo95)
    });
    let games = 2 * v.totals.as_ref().map_or(0, |t| t.pairs);
    let sprt = v
        .sprt
        .as_ref()
        .map_or(pb::SprtState::Continue, |s| s.state());
    Some(match (v.state(), sprt) {
        (_, pb::SprtState::AcceptedH1) => format!(
            "tuned, and the tune is {elo}, H1 accepted after {games} games (run {})",
            v.run_id
        ),
        (_, pb::SprtState::AcceptedH0) => format!(
            "tuned, but not significantly better: {elo}, H0 accepted after {games} games (run {})",
            v.run_id
        ),
        (pb::RunState::Active, _) => {
            format!(
                "tuned; verifying in run {}: {elo} after {games} games",
                v.run_id
            )
        }
        _ => format!(
            "tuned; verification run {} ended without a verdict at {elo} after {games} games",
            v.run_id
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_progress_prints_the_first_games_then_at_most_every_ten_seconds() {
        let start = Instant::now();
        let at = |secs: u64| start + Duration::from_secs(secs);
        let mut plain = PlainProgress::default();
        assert!(!plain.due(0, at(0)), "no games yet");
        assert!(plain.due(2, at(1)));
        assert!(!plain.due(4, at(5)), "within ten seconds of the last line");
        assert!(plain.due(6, at(11)));
        assert!(!plain.due(8, at(20)));
        assert!(plain.due(8, at(21)));
        assert!(!plain.due(8, at(60)), "the games have not moved");
    }

    #[test]
    fn failures_are_listed_per_worker_and_summed_per_engine() {
        let run = pb::RunStatus::default();
        assert!(failures(&run, &[]).contains("none"));
        let f = |worker_id, name: &str, loser, reason: &str, overruns: &[u64]| pb::FailureCount {
            worker_id,
            worker_name: name.to_owned(),
            loser,
            reason: reason.to_owned(),
            games: overruns.len().max(1) as u64,
            overruns_ms: overruns.to_vec(),
        };
        let text = failures(
            &run,
            &[
                f(1, "a", 0, "time-forfeit", &[10, 30]),
                f(1, "a", 1, "resignation", &[]),
                f(2, "b", 0, "time-forfeit", &[5, 7, 90]),
            ],
        );
        assert!(
            text.contains(
                "a (#1): dev time-forfeit 2 (overrun median 20 ms, max 30 ms), base resignation 1\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("b (#2): dev time-forfeit 3 (overrun median 7 ms, max 90 ms)\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "by engine: dev time-forfeit 5 (overrun median 10 ms, max 90 ms), base resignation 1\n"
            ),
            "{text}"
        );
    }
}
