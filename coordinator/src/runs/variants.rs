//! Variants runs: one engine (both players alike) plays the same openings
//! under two or more rule sets, `pairs` pairs per variant.
//!
//! # Slices
//!
//! A lease covers one variant. Fresh slices go round by round: round `r`
//! hands out, for each variant in order, the pairs `[r·B, r·B + s)` with
//! `s = min(B, pairs − r·B)` (`B` = batch pairs). So every variant plays the
//! same openings, and the variants stay level while the run is under way.
//! Leases set `OpeningSlice::per_game`: each game of a pair takes its own
//! opening, because the two players are the same engine and a colour-swapped
//! replay of one opening would repeat the game move for move. The run's fresh-pair
//! counter `g` (pairs issued over all variants) fixes the next slice
//! ([`fresh_slice`]); the lease row records its variant so that an expired
//! slice is handed out again under the same variant.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use xq_engine::rules::RuleSet;
use xq_proto::variant_stats::VariantStats;
use xq_proto::{BatchOutcome, Invalid, pb};

use super::wire;
use super::{
    Applied, Effect, Kind, KindInfo, Lease, Params, Progress, RunError, RunKind, RunStatus, Slice, SliceWork,
    StoredProgress, StoredResult, Section,
};

/// Most variants in one run.
pub const MAX_VARIANTS: usize = 16;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VariantsSpec {
    /// The rule sets compared (distinct; stored as their preset names); the
    /// first is the reference.
    #[serde(with = "xq_proto::rule_set::presets")]
    pub rules: Vec<RuleSet>,
    /// Parameter overrides of the engine (both players).
    pub params: Params,
    /// Game pairs per variant.
    pub pairs: u64,
}

impl VariantsSpec {
    /// Pairs over all variants.
    pub fn target_pairs(&self) -> u64 {
        self.pairs.saturating_mul(self.rules.len() as u64)
    }
}

/// A variants run: the per-variant report; the same engine as dev and base.
pub const INFO: KindInfo = KindInfo {
    name: "variants",
    sections: &[Section::Variants],
    player_names: ["dev", "base"],
};

impl Kind for VariantsSpec {
    fn kind(&self) -> RunKind {
        RunKind::Variants
    }

    fn target_pairs(&self) -> Option<u64> {
        Some(self.target_pairs())
    }

    fn variants(&self) -> &[RuleSet] {
        &self.rules
    }

    /// `pairs` over all variants, a multiple of their number. The slices
    /// handed out stay those of the new cap: the rounds before the current
    /// one are full under it, and a round under way keeps its size.
    fn set_target_pairs(&mut self, pairs: u64, issued: u64, batch: u32) -> Result<(), RunError> {
        let variants = self.rules.len() as u64;
        if variants == 0 || !pairs.is_multiple_of(variants) {
            return Err(RunError::invalid(
                "pairs",
                format!("a cap over {variants} variants must be a multiple of {variants} pairs"),
            ));
        }
        let changed = VariantsSpec {
            pairs: pairs / variants,
            ..self.clone()
        };
        if !same_slices(self, &changed, batch, issued) {
            return Err(RunError::invalid(
                "pairs",
                format!(
                    "its round under way has {} pairs per variant and would get {}, \
                     so the variants would not play the same openings",
                    round_size(self, batch, issued),
                    round_size(&changed, batch, issued)
                ),
            ));
        }
        *self = changed;
        Ok(())
    }

    /// One [`VariantTotals`] per variant, in the spec's order: stored as a
    /// JSON array whose entries may be `null` (a variant without a counted
    /// result, as runs stored before schema version 26 left them), read
    /// with every variant present.
    fn read_progress(
        &self,
        run: u64,
        stored: Option<&StoredProgress>,
    ) -> Result<Progress, RunError> {
        let stored: Vec<Option<VariantTotals>> = match stored {
            Some(s) => s.decode(run)?,
            None => Vec::new(),
        };
        let mut stored = stored.into_iter();
        let totals = self
            .rules
            .iter()
            .map(|rules| {
                stored.next().flatten().unwrap_or_else(|| VariantTotals {
                    rules: *rules,
                    ..Default::default()
                })
            })
            .collect();
        Ok(Progress::Variants(totals))
    }

    /// Round by round, one variant per slice (see the module docs).
    fn next_slice(&self, batch: u32, issued: u64) -> Option<Slice> {
        fresh_slice(self, batch, issued)
    }

    /// Both players: the same engine with the same parameters, under the
    /// slice's rule set; each game takes its own opening.
    fn slice_work(&self, run: &RunStatus, slice: &Slice) -> Result<SliceWork, RunError> {
        let rules = slice
            .variant
            .and_then(|i| self.rules.get(i))
            .ok_or_else(|| {
                RunError::Corrupt(format!(
                    "variants run {} has no variant {:?}",
                    run.id, slice.variant
                ))
            })?;
        let settings = &run.spec.settings;
        Ok(SliceWork {
            players: [
                settings.player(self.params.clone()),
                settings.player(self.params.clone()),
            ],
            rules: *rules,
            per_game: true,
            spsa_request: None,
        })
    }

    /// Adds the lease's games to its variant's totals (the lease row records
    /// the variant); finished once every pair of every variant is counted.
    fn apply(
        &self,
        run: &RunStatus,
        lease: &Lease,
        outcome: &BatchOutcome,
    ) -> Result<Applied, RunError> {
        let index = lease
            .variant
            .filter(|&i| i < self.rules.len())
            .ok_or_else(|| {
                RunError::Corrupt(format!("variants lease {} has no variant", lease.id))
            })?;
        let stats = outcome.variant.as_ref().ok_or_else(|| {
            RunError::invalid("results.variant", "missing (a variants run needs it)")
        })?;
        let mut all = run.progress.variants().to_vec();
        let counted = all.len().min(self.rules.len());
        all.extend(self.rules[counted..].iter().map(|&rules| VariantTotals {
            rules,
            ..Default::default()
        }));
        all[index].add(outcome, stats);
        Ok(Applied {
            effects: vec![Effect::Progress(StoredProgress::of(&all)?)],
            finished: run.totals.pairs >= self.target_pairs(),
        })
    }

    /// Every variant's totals from the kept results of its leases.
    fn recount(
        &self,
        run: &RunStatus,
        kept: &[StoredResult],
        _: &Lease,
    ) -> Result<Applied, RunError> {
        let mut all = Vec::with_capacity(self.rules.len());
        for (index, rules) in self.rules.iter().enumerate() {
            let mut totals = VariantTotals {
                rules: *rules,
                ..Default::default()
            };
            for r in super::exclusion::of_variant(kept, index) {
                let stats = r.stats.as_ref().ok_or_else(|| {
                    RunError::Corrupt(format!(
                        "variants lease {} has no stored statistics",
                        r.lease_id
                    ))
                })?;
                let outcome = BatchOutcome {
                    totals: r.totals.clone(),
                    ..BatchOutcome::default()
                };
                totals.add(&outcome, stats);
            }
            all.push(totals);
        }
        Ok(Applied {
            effects: vec![Effect::Progress(StoredProgress::of(&all)?)],
            finished: run.totals.pairs >= self.target_pairs(),
        })
    }
}

/// The fresh slice after `issued` pairs were handed out (see the module
/// docs), or `None` when every pair was. `batch` is at least 1.
pub fn fresh_slice(spec: &VariantsSpec, batch: u32, issued: u64) -> Option<Slice> {
    let variants = spec.rules.len() as u64;
    if variants == 0 || issued >= spec.target_pairs() {
        return None;
    }
    let batch = u64::from(batch.max(1));
    let round = issued / (variants * batch);
    let start = round * batch;
    let size = batch.min(spec.pairs - start);
    let within = issued - round * variants * batch;
    Some(Slice {
        variant: Some((within / size) as usize),
        offset: start,
        pairs: size as u32,
    })
}

/// The pairs per variant of the round that holds fresh pair `issued`.
fn round_size(spec: &VariantsSpec, batch: u32, issued: u64) -> u64 {
    let batch = u64::from(batch.max(1));
    let round = issued / (spec.rules.len().max(1) as u64 * batch);
    batch.min(spec.pairs.saturating_sub(round * batch))
}

/// Whether the first `issued` fresh pairs are cut into the same slices
/// under `a` and `b` (same rules and batch, other pairs per variant): every
/// round before the current one is full under both, and the current one,
/// if started, has the same size.
fn same_slices(a: &VariantsSpec, b: &VariantsSpec, batch: u32, issued: u64) -> bool {
    let batch_u = u64::from(batch.max(1));
    let per_round = (a.rules.len() as u64 * batch_u).max(1);
    let round = issued / per_round;
    let started = !issued.is_multiple_of(per_round);
    let full_before = |s: &VariantsSpec| s.pairs >= round * batch_u;
    full_before(a)
        && full_before(b)
        && (!started || round_size(a, batch, issued) == round_size(b, batch, issued))
}

/// One variant's counted games.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct VariantTotals {
    /// The variant's rule set, as in [`VariantsSpec::rules`] (stored as its
    /// preset name).
    #[serde(with = "xq_proto::rule_set::preset")]
    pub rules: RuleSet,
    pub pairs: u64,
    /// Games by end reason.
    pub reasons: BTreeMap<String, u64>,
    /// Plies over all games.
    pub total_plies: u64,
    pub stats: VariantStats,
}

impl VariantTotals {
    /// Adds a lease's games; `stats` is the outcome's checked variant statistics.
    pub fn add(&mut self, outcome: &BatchOutcome, stats: &VariantStats) {
        self.pairs = self.pairs.saturating_add(outcome.totals.pairs);
        for (reason, games) in &outcome.totals.reasons {
            let n = self.reasons.entry(reason.clone()).or_default();
            *n = n.saturating_add(*games);
        }
        self.total_plies = self.total_plies.saturating_add(outcome.totals.total_plies);
        self.stats.merge(stats);
    }
}

impl TryFrom<pb::VariantsSpec> for VariantsSpec {
    type Error = Invalid;

    fn try_from(v: pb::VariantsSpec) -> Result<Self, Invalid> {
        let pb::VariantsSpec {
            rules,
            params,
            pairs,
        } = v;
        if !(2..=MAX_VARIANTS).contains(&rules.len()) {
            return Err(Invalid::new(
                "variants.rules",
                format!("{} rule sets, need 2 to {MAX_VARIANTS}", rules.len()),
            ));
        }
        let mut seen: Vec<RuleSet> = Vec::with_capacity(rules.len());
        for r in &rules {
            let parsed = xq_proto::rule_set::parse("variants.rules", r)?;
            if seen.contains(&parsed) {
                return Err(Invalid::new(
                    "variants.rules",
                    format!("{} repeats an earlier rule set", xq_proto::quote(r)),
                ));
            }
            seen.push(parsed);
        }
        if pairs == 0 {
            return Err(Invalid::new("variants.pairs", "must be at least 1"));
        }
        wire::check_params("variants.params", &params)?;
        Ok(VariantsSpec {
            rules: seen,
            params: params.into_iter().collect(),
            pairs,
        })
    }
}

impl From<VariantsSpec> for pb::VariantsSpec {
    fn from(v: VariantsSpec) -> Self {
        let VariantsSpec {
            rules,
            params,
            pairs,
        } = v;
        pb::VariantsSpec {
            rules: rules.iter().map(xq_proto::rule_set::name).collect(),
            params: params.into_iter().collect(),
            pairs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(variants: usize, pairs: u64) -> VariantsSpec {
        VariantsSpec {
            rules: vec![RuleSet::STANDARD; variants],
            params: Params::new(),
            pairs,
        }
    }

    fn all(spec: &VariantsSpec, batch: u32) -> Vec<Slice> {
        let mut issued = 0;
        let mut out = Vec::new();
        while let Some(s) = fresh_slice(spec, batch, issued) {
            issued += u64::from(s.pairs);
            out.push(s);
        }
        out
    }

    #[test]
    fn a_cap_changes_only_where_the_slices_handed_out_stay_the_same() {
        let mut s = spec(2, 10);
        let err = s.set_target_pairs(21, 0, 4).unwrap_err().to_string();
        assert!(err.contains("multiple of 2"), "{err}");
        // Round 0 under way (variant 0 has [0, 4)): it keeps its size of 4.
        s.set_target_pairs(16, 4, 4).unwrap();
        assert_eq!(s.pairs, 8);
        let err = s.set_target_pairs(6, 4, 4).unwrap_err().to_string();
        assert!(err.contains("4 pairs per variant and would get 3"), "{err}");
        // The last round of 10 per variant (2 pairs) begun: it cannot grow.
        let mut s = spec(2, 10);
        let err = s.set_target_pairs(24, 18, 4).unwrap_err().to_string();
        assert!(err.contains("2 pairs per variant and would get 4"), "{err}");
        // At a round's boundary the cap may grow or shrink to it.
        s.set_target_pairs(16, 16, 4).unwrap();
        assert_eq!(all(&s, 4).len(), 4);
        let mut grown = spec(2, 8);
        grown.set_target_pairs(30, 16, 4).unwrap();
        let slices = all(&grown, 4);
        assert_eq!(&slices[..4], &all(&spec(2, 8), 4)[..]);
        assert_eq!(slices.last().map(|s| (s.offset, s.pairs)), Some((12, 3)));
    }

    #[test]
    fn every_opening_is_played_under_every_variant_once() {
        for (variants, pairs, batch) in [(2, 10, 4), (3, 7, 8), (2, 8, 4), (4, 1, 3)] {
            let s = spec(variants, pairs);
            let slices = all(&s, batch);
            for v in 0..variants {
                let mut openings: Vec<u64> = slices
                    .iter()
                    .filter(|sl| sl.variant == Some(v))
                    .flat_map(|sl| sl.offset..sl.offset + u64::from(sl.pairs))
                    .collect();
                openings.sort_unstable();
                assert_eq!(
                    openings,
                    (0..pairs).collect::<Vec<_>>(),
                    "{variants} {pairs}"
                );
            }
        }
        let s = all(&spec(2, 10), 4);
        let order: Vec<_> = s
            .iter()
            .map(|sl| (sl.variant.unwrap_or(99), sl.offset, sl.pairs))
            .collect();
        assert_eq!(
            order,
            [
                (0, 0, 4),
                (1, 0, 4),
                (0, 4, 4),
                (1, 4, 4),
                (0, 8, 2),
                (1, 8, 2)
            ]
        );
    }
}
