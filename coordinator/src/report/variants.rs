//! The report of a variants run: per variant, Red's results with 95 % Wilson
//! intervals, Red's score under the variant's own scoring, the decisive
//! rate, game lengths, end reasons and (capture conversion) the share of
//! captured pieces that converted; then each variant against the first.
//!
//! # Units and tests
//!
//! * Rates are per game in `[0, 1]`; Red's score is normalized to `[0, 1]`
//!   (reform-2007: points / 3, so a draw is worth ⅓ to Red).
//! * Variances of the draw rate and of Red's score use the opening pair as the
//!   unit ([`summarize_pairs`]); the G-test and the draw-rate z-test are
//!   divided by the pooled design effect (see [`crate::stats::variants`]).
//! * Differences are `variant − reference`. Red's score difference is given
//!   only when both use the same scoring.
//! * `draw_lower_p` is the one-sided p-value of the draw-rate z-test for "the
//!   variant draws less than the reference" (Φ(z)), the seed's claim for
//!   capture conversion.
//! * Game lengths come from the workers' histogram ([`PLIES_BUCKET`]-ply
//!   buckets): the mean is exact, the median is interpolated linearly within
//!   its bucket.

use std::collections::BTreeMap;

use serde::Serialize;
use xq_engine::RuleSet;
use xq_proto::rule_set::{self, preset};
use xq_proto::variant_stats::{CONVERTIBLE, PLIES_BUCKET, PLIES_BUCKETS};

use crate::runs::VariantTotals;
use crate::stats::StatsError;
use crate::stats::distributions::normal_cdf;
use crate::stats::variants::{
    Difference, MeanEstimate, PairCounts, Proportion, Scoring, TestResult, VariantSummary, compare,
    summarize_pairs, wilson_interval,
};

/// The seed's claimed conversion rates, in [`CONVERTIBLE`] order (engine/RULES.md §8:
/// chariot 1 %, horse 50 %, cannon 30 %, elephant 70 %).
pub const CLAIMED_CONVERSION: [f64; 4] = [0.01, 0.50, 0.30, 0.70];

/// Kind names in [`CONVERTIBLE`] order.
pub const KIND_NAMES: [&str; 4] = ["chariot", "horse", "cannon", "elephant"];

/// Game lengths from the histogram.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plies {
    pub mean: f64,
    pub median: f64,
    /// `(first ply of the bucket, games)`; the last bucket is open-ended.
    pub histogram: Vec<(u32, u64)>,
}

/// One kind's conversions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KindConversion {
    pub kind: &'static str,
    pub captured: u64,
    pub converted: u64,
    /// converted / captured with its Wilson interval; `None` without captures.
    pub rate: Option<Proportion>,
    /// The seed's claim.
    pub claimed: f64,
    /// Games in which the kind converted at least once.
    pub games_with_conversion: u64,
    /// Their share of the variant's games, with its Wilson interval.
    pub games_share: Proportion,
}

/// One variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantReport {
    /// Written as its preset name.
    #[serde(serialize_with = "preset::serialize")]
    pub rules: RuleSet,
    /// `standard` (1/½/0) or `reform-2007` (points / 3).
    pub scoring: &'static str,
    pub games: u64,
    pub pairs: u64,
    pub red_win: Proportion,
    pub draw: Proportion,
    pub black_win: Proportion,
    pub decisive: Proportion,
    /// Red's expected score under the variant's own scoring, pair-based.
    pub red_score: MeanEstimate,
    pub plies: Plies,
    /// Games by end reason token.
    pub reasons: BTreeMap<String, u64>,
    /// Present when the variant plays capture conversion.
    pub conversion: Option<Vec<KindConversion>>,
}

/// One variant against the reference (the first variant).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparisonReport {
    #[serde(serialize_with = "preset::serialize")]
    pub rules: RuleSet,
    #[serde(serialize_with = "preset::serialize")]
    pub reference: RuleSet,
    pub red_win: Difference,
    pub draw: Difference,
    pub black_win: Difference,
    /// Only when both variants use the same scoring.
    pub red_score: Option<Difference>,
    /// G-test of homogeneity on the 2×3 table (Red win, draw, Black win).
    pub g_test: TestResult,
    /// Pooled two-proportion z-test on the draw rate (two-sided p).
    pub draw_rate_test: TestResult,
    /// One-sided p for "the variant draws less than the reference".
    pub draw_lower_p: f64,
    pub design_effect: f64,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantsReport {
    pub variants: Vec<VariantReport>,
    pub comparisons: Vec<ComparisonReport>,
}

fn scoring(rules: &RuleSet) -> Scoring {
    match rules.scoring {
        xq_engine::rules::Scoring::Reform2007 => Scoring::Reform2007,
        xq_engine::rules::Scoring::Standard => Scoring::Standard,
    }
}

fn pair_counts(t: &VariantTotals) -> PairCounts {
    let p = t.stats.pair_outcomes;
    PairCounts([[p[0], p[1], p[2]], [p[3], p[4], p[5]], [p[6], p[7], p[8]]])
}

fn plies(t: &VariantTotals) -> Plies {
    let games = t.stats.games();
    let h = &t.stats.plies_histogram;
    let half = games as f64 / 2.0;
    let mut before = 0u64;
    let mut median = 0.0;
    for (i, &n) in h.iter().enumerate() {
        if n > 0 && (before + n) as f64 >= half {
            let lo = (i as u32 * PLIES_BUCKET) as f64;
            median = lo + PLIES_BUCKET as f64 * (half - before as f64) / n as f64;
            break;
        }
        before += n;
    }
    Plies {
        mean: t.total_plies as f64 / games.max(1) as f64,
        median,
        histogram: (0..PLIES_BUCKETS)
            .map(|i| (i as u32 * PLIES_BUCKET, h[i]))
            .collect(),
    }
}

fn share(successes: u64, n: u64) -> Proportion {
    let (lower, upper) = wilson_interval(successes, n, 1.959_963_984_540_054);
    Proportion {
        rate: successes as f64 / n.max(1) as f64,
        lower,
        upper,
    }
}

fn conversion(t: &VariantTotals) -> Option<Vec<KindConversion>> {
    if !t.rules.conversion {
        return None;
    }
    let s = &t.stats;
    Some(
        (0..CONVERTIBLE.len())
            .map(|i| KindConversion {
                kind: KIND_NAMES[i],
                captured: s.captured[i],
                converted: s.converted[i],
                rate: (s.captured[i] > 0).then(|| share(s.converted[i], s.captured[i])),
                claimed: CLAIMED_CONVERSION[i],
                games_with_conversion: s.games_with_conversion[i],
                games_share: share(s.games_with_conversion[i], s.games()),
            })
            .collect(),
    )
}

fn variant(t: &VariantTotals, summary: &VariantSummary) -> VariantReport {
    VariantReport {
        rules: t.rules,
        scoring: match summary.scoring {
            Scoring::Standard => "standard",
            Scoring::Reform2007 => "reform-2007",
        },
        games: summary.counts.games(),
        pairs: t.pairs,
        red_win: summary.red_win,
        draw: summary.draw,
        black_win: summary.black_win,
        decisive: summary.decisive,
        red_score: summary.red_score,
        plies: plies(t),
        reasons: t.reasons.clone(),
        conversion: conversion(t),
    }
}

/// The report of variants with at least one counted pair each; the first is
/// the reference of the comparisons.
pub fn report(totals: &[VariantTotals]) -> Result<VariantsReport, StatsError> {
    let counted: Vec<&VariantTotals> = totals.iter().filter(|t| t.pairs > 0).collect();
    let mut variants = Vec::new();
    let mut standard = Vec::new();
    for t in &counted {
        let own = summarize_pairs(&pair_counts(t), scoring(&t.rules), None)?;
        variants.push(variant(t, &own));
        standard.push(summarize_pairs(&pair_counts(t), Scoring::Standard, None)?);
    }
    let mut comparisons = Vec::new();
    if let Some((reference, rest)) = standard.split_first() {
        for (i, s) in rest.iter().enumerate() {
            let c = compare(s, reference)?;
            let same_scoring = variants[i + 1].scoring == variants[0].scoring;
            let red_score = same_scoring.then(|| {
                let own = |v: &VariantReport| v.red_score;
                let (a, b) = (own(&variants[i + 1]), own(&variants[0]));
                difference(a, b)
            });
            comparisons.push(ComparisonReport {
                rules: counted[i + 1].rules,
                reference: counted[0].rules,
                red_win: c.red_win,
                draw: c.draw,
                black_win: c.black_win,
                red_score,
                g_test: c.g_test,
                draw_rate_test: c.draw_rate_test,
                draw_lower_p: normal_cdf(c.draw_rate_test.statistic),
                design_effect: c.design_effect,
            });
        }
    }
    Ok(VariantsReport {
        variants,
        comparisons,
    })
}

fn difference(a: MeanEstimate, b: MeanEstimate) -> Difference {
    let se = (a.se.powi(2) + b.se.powi(2)).sqrt();
    let diff = a.mean - b.mean;
    Difference {
        diff,
        lower: diff - 1.959_963_984_540_054 * se,
        upper: diff + 1.959_963_984_540_054 * se,
    }
}

/// A p-value: three decimals, or two significant digits below 0.001.
fn pvalue(p: f64) -> String {
    if p < 1e-3 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

fn pct(p: f64) -> String {
    format!("{:.1}", 100.0 * p)
}

fn rate(p: &Proportion) -> String {
    format!("{:>5}% [{}, {}]", pct(p.rate), pct(p.lower), pct(p.upper))
}

fn diff(d: &Difference) -> String {
    format!(
        "{:+.1} pp [{:+.1}, {:+.1}]",
        100.0 * d.diff,
        100.0 * d.lower,
        100.0 * d.upper
    )
}

/// The report as text for people.
pub fn text(r: &VariantsReport) -> String {
    let mut out = String::new();
    for v in &r.variants {
        out += &format!(
            "variant {} ({} games in {} pairs; scoring {})\n",
            rule_set::name(&v.rules),
            v.games,
            v.pairs,
            match v.scoring {
                "reform-2007" => "reform-2007: win 3, draw Red 1 / Black 2; Red's score = points/3",
                _ => "standard 1/½/0",
            }
        );
        out += &format!("  red win    {}\n", rate(&v.red_win));
        out += &format!("  draw       {}\n", rate(&v.draw));
        out += &format!("  black win  {}\n", rate(&v.black_win));
        out += &format!("  decisive   {}\n", rate(&v.decisive));
        out += &format!(
            "  red score  {:.3} [{:.3}, {:.3}] (pairs as the unit)\n",
            v.red_score.mean, v.red_score.lower, v.red_score.upper
        );
        out += &format!(
            "  plies      mean {:.1}, median {:.0}; histogram",
            v.plies.mean, v.plies.median
        );
        for (from, n) in v.plies.histogram.iter().filter(|(_, n)| *n > 0) {
            out += &format!(" {from}:{n}");
        }
        out += "\n  ended by  ";
        for (reason, n) in &v.reasons {
            out += &format!(
                " {reason} {n} ({}%)",
                pct(*n as f64 / v.games.max(1) as f64)
            );
        }
        out += "\n";
        if let Some(conv) = &v.conversion {
            out += "  conversion (share of captured pieces; seed's claim; games with one)\n";
            for k in conv {
                let share = k.rate.as_ref().map_or("     -".to_owned(), rate);
                out += &format!(
                    "    {:<9} {:>5}/{:<5} {}  claim {:>3}%  games {}\n",
                    k.kind,
                    k.converted,
                    k.captured,
                    share,
                    pct(k.claimed),
                    rate(&k.games_share)
                );
            }
        }
    }
    for c in &r.comparisons {
        out += &format!(
            "{} − {}\n",
            rule_set::name(&c.rules),
            rule_set::name(&c.reference)
        );
        out += &format!("  red win    {}\n", diff(&c.red_win));
        out += &format!("  draw       {}\n", diff(&c.draw));
        out += &format!("  black win  {}\n", diff(&c.black_win));
        if let Some(d) = &c.red_score {
            out += &format!(
                "  red score  {:+.3} [{:+.3}, {:+.3}]\n",
                d.diff, d.lower, d.upper
            );
        }
        out += &format!(
            "  G-test (2×3, design effect {:.2}): G = {:.2}, df {}, p = {}\n",
            c.design_effect,
            c.g_test.statistic,
            c.g_test.df,
            pvalue(c.g_test.p_value)
        );
        out += &format!(
            "  draw rate z-test: z = {:.2}, p = {} (two-sided); p(lower draw rate) = {}\n",
            c.draw_rate_test.statistic,
            pvalue(c.draw_rate_test.p_value),
            pvalue(c.draw_lower_p)
        );
    }
    out
}

/// One CSV row per variant: `rules,scoring,games,pairs,red_win,red_win_lo,
/// red_win_hi,draw,draw_lo,draw_hi,black_win,black_win_lo,black_win_hi,
/// decisive,red_score,red_score_lo,red_score_hi,plies_mean,plies_median`,
/// then per convertible kind `<kind>_captured,<kind>_converted,<kind>_games`.
pub fn csv(r: &VariantsReport, totals: &[VariantTotals]) -> String {
    let mut out = "rules,scoring,games,pairs,red_win,red_win_lo,red_win_hi,draw,draw_lo,draw_hi,\
                   black_win,black_win_lo,black_win_hi,decisive,red_score,red_score_lo,\
                   red_score_hi,plies_mean,plies_median"
        .to_owned();
    for k in KIND_NAMES {
        out += &format!(",{k}_captured,{k}_converted,{k}_games");
    }
    out += "\n";
    for v in &r.variants {
        let p = |x: &Proportion| format!("{:.5},{:.5},{:.5}", x.rate, x.lower, x.upper);
        out += &format!(
            "{},{},{},{},{},{},{},{:.5},{:.5},{:.5},{:.5},{:.2},{:.2}",
            rule_set::name(&v.rules),
            v.scoring,
            v.games,
            v.pairs,
            p(&v.red_win),
            p(&v.draw),
            p(&v.black_win),
            v.decisive.rate,
            v.red_score.mean,
            v.red_score.lower,
            v.red_score.upper,
            v.plies.mean,
            v.plies.median
        );
        if let Some(t) = totals.iter().find(|t| t.rules == v.rules) {
            for i in 0..CONVERTIBLE.len() {
                out += &format!(
                    ",{},{},{}",
                    t.stats.captured[i], t.stats.converted[i], t.stats.games_with_conversion[i]
                );
            }
        }
        out += "\n";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_proto::variant_stats::VariantStats;

    fn totals(rules: &str, pair_outcomes: [u64; 9], converted: [u64; 4]) -> VariantTotals {
        let pairs: u64 = pair_outcomes.iter().sum();
        let mut by_game = [0u64; 3];
        for (i, &n) in pair_outcomes.iter().enumerate() {
            by_game[i / 3] += n;
            by_game[i % 3] += n;
        }
        let mut plies_histogram = [0; PLIES_BUCKETS];
        plies_histogram[4] = 2 * pairs;
        VariantTotals {
            rules: rules.parse().unwrap(),
            pairs,
            reasons: BTreeMap::from([("checkmate".to_owned(), 2 * pairs)]),
            total_plies: 90 * 2 * pairs,
            stats: VariantStats {
                red_wins: by_game[0],
                draws: by_game[1],
                black_wins: by_game[2],
                pair_outcomes,
                plies_histogram,
                captured: [10, 10, 10, 10],
                converted,
                games_with_conversion: converted,
            },
        }
    }

    #[test]
    fn reports_each_variant_and_compares_with_the_first() {
        let t = [
            totals("standard", [20, 30, 10, 30, 60, 20, 10, 20, 10], [0; 4]),
            totals(
                "conversion",
                [40, 20, 10, 20, 30, 10, 10, 10, 20],
                [0, 5, 3, 7],
            ),
            totals("reform-2007", [20, 30, 10, 30, 60, 20, 10, 20, 10], [0; 4]),
        ];
        let r = report(&t).unwrap();
        assert_eq!(r.variants.len(), 3);
        assert_eq!(r.variants[0].plies.mean, 90.0);
        assert!((80.0..100.0).contains(&r.variants[0].plies.median));
        assert!(r.variants[0].conversion.is_none());
        let conv = r.variants[1].conversion.as_ref().unwrap();
        assert_eq!(conv[1].kind, "horse");
        assert_eq!(conv[1].rate.unwrap().rate, 0.5);
        assert_eq!(r.variants[2].scoring, "reform-2007");
        assert!(r.variants[2].red_score.mean < r.variants[0].red_score.mean);
        let c = &r.comparisons[0];
        assert!(c.draw.diff < 0.0);
        assert!(c.draw_lower_p < 0.05, "{}", c.draw_lower_p);
        assert!(c.red_score.is_some());
        assert!(r.comparisons[1].red_score.is_none());
        assert!(r.comparisons[1].g_test.p_value > 0.99);
        assert!(text(&r).contains("p(lower draw rate)"));
        assert_eq!(csv(&r, &t).lines().count(), 4);
    }
}
