//! `xq-coordinator stats compare`: two variants' results side by side.

use clap::{Args, ValueEnum};
use serde_json::json;

use xq_coordinator::stats::variants::{
    ColorCounts, PairCounts, Scoring, VariantSummary, compare, games_to_detect_draw_difference,
    summarize, summarize_pairs,
};
use xq_proto::outln;

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ScoringArg {
    /// Win 1, draw ½, loss 0.
    Standard,
    /// Win 3, loss 0, draw 1 for Red and 2 for Black; Red's score = points/3.
    Reform2007,
}

impl From<ScoringArg> for Scoring {
    fn from(s: ScoringArg) -> Self {
        match s {
            ScoringArg::Standard => Scoring::Standard,
            ScoringArg::Reform2007 => Scoring::Reform2007,
        }
    }
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Variant A per-game counts: Red wins, draws, Black wins.
    #[arg(
        long,
        value_name = "W,D,L",
        allow_hyphen_values = true,
        required_unless_present = "a_pairs"
    )]
    a: Option<String>,
    /// Variant B per-game counts: Red wins, draws, Black wins.
    #[arg(
        long,
        value_name = "W,D,L",
        allow_hyphen_values = true,
        required_unless_present = "b_pairs"
    )]
    b: Option<String>,
    /// Variant A pair counts instead, RR,RD,RB,DR,DD,DB,BR,BD,BB (first game,
    /// second game; R = Red win, D = draw, B = Black win): variances then use
    /// the pair as the unit.
    #[arg(
        long,
        value_name = "RR,…,BB",
        allow_hyphen_values = true,
        conflicts_with = "a"
    )]
    a_pairs: Option<String>,
    /// Variant B pair counts, as for --a-pairs.
    #[arg(
        long,
        value_name = "RR,…,BB",
        allow_hyphen_values = true,
        conflicts_with = "b"
    )]
    b_pairs: Option<String>,
    /// How Red's score is counted.
    #[arg(long, value_enum, default_value = "standard")]
    scoring: ScoringArg,
    /// Draw-rate difference (a − b) to plan for; default: the observed one.
    #[arg(long, allow_negative_numbers = true)]
    detect: Option<f64>,
    /// Significance level for the sample-size estimate.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// Power for the sample-size estimate.
    #[arg(long, default_value_t = 0.8)]
    power: f64,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

fn side(
    counts: Option<&String>,
    pairs: Option<&String>,
    scoring: Scoring,
) -> anyhow::Result<VariantSummary> {
    Ok(match (counts, pairs) {
        (_, Some(p)) => summarize_pairs(&p.parse::<PairCounts>()?, scoring, None)?,
        (Some(c), None) => summarize(c.parse::<ColorCounts>()?, scoring, None)?,
        (None, None) => anyhow::bail!("each variant needs counts or pair counts"),
    })
}

impl CompareArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let scoring: Scoring = self.scoring.into();
        let scoring_label = match scoring {
            Scoring::Standard => "standard 1/0.5/0",
            Scoring::Reform2007 => "reform2007, points/3",
        };
        let a = side(self.a.as_ref(), self.a_pairs.as_ref(), scoring)?;
        let b = side(self.b.as_ref(), self.b_pairs.as_ref(), scoring)?;
        let cmp = compare(&a, &b)?;
        let target = self.detect.map_or(b.draw.rate, |d| a.draw.rate - d);
        let games_needed = games_to_detect_draw_difference(
            a.draw.rate,
            target,
            self.alpha,
            self.power,
            cmp.design_effect,
        );
        let games_needed = match (games_needed, self.detect) {
            (Ok(n), _) => Some(n),
            (Err(err), Some(_)) => return Err(err.into()),
            (Err(_), None) => None,
        };
        if self.json {
            let value = json!({
                "a": a,
                "b": b,
                "difference": cmp,
                "games_needed_per_variant": games_needed,
            });
            outln!("{}", serde_json::to_string_pretty(&value)?)?;
            return Ok(());
        }
        for (name, s) in [("a", &a), ("b", &b)] {
            let pct = |p: f64| 100.0 * p;
            outln!(
                "variant {name}: {} games{}",
                s.counts.games(),
                s.pairs.map_or(String::new(), |p| format!(" in {p} pairs"))
            )?;
            for (label, p) in [
                ("red win", &s.red_win),
                ("draw", &s.draw),
                ("black win", &s.black_win),
                ("decisive", &s.decisive),
            ] {
                outln!(
                    "  {label}: {:.2}% [{:.2}%, {:.2}%]",
                    pct(p.rate),
                    pct(p.lower),
                    pct(p.upper)
                )?;
            }
            outln!(
                "  red score ({scoring_label}): {:.4} [{:.4}, {:.4}]",
                s.red_score.mean,
                s.red_score.lower,
                s.red_score.upper
            )?;
        }
        outln!("a - b:")?;
        for (label, d) in [
            ("red win", &cmp.red_win),
            ("draw", &cmp.draw),
            ("black win", &cmp.black_win),
        ] {
            outln!(
                "  {label}: {:+.2}% [{:+.2}%, {:+.2}%]",
                100.0 * d.diff,
                100.0 * d.lower,
                100.0 * d.upper
            )?;
        }
        let d = &cmp.red_score;
        outln!(
            "  red score: {:+.4} [{:+.4}, {:+.4}]",
            d.diff,
            d.lower,
            d.upper
        )?;
        outln!(
            "g-test: g = {:.4}, df = {}, p = {:.4e}",
            cmp.g_test.statistic,
            cmp.g_test.df,
            cmp.g_test.p_value
        )?;
        outln!(
            "chi-square: x2 = {:.4}, df = {}, p = {:.4e}",
            cmp.chi_square.statistic,
            cmp.chi_square.df,
            cmp.chi_square.p_value
        )?;
        outln!(
            "draw rate z-test: z = {:.4}, p = {:.4e}",
            cmp.draw_rate_test.statistic,
            cmp.draw_rate_test.p_value
        )?;
        if let Some(n) = games_needed {
            outln!(
                "games per variant to detect a draw-rate difference of {:.2}% (alpha {}, power {}): {n}",
                100.0 * (a.draw.rate - target),
                self.alpha,
                self.power
            )?;
        }
        Ok(())
    }
}
