//! Training positions from stored games (`datagen-export`): each game is
//! replayed from its start, the positions that pass the [`Filters`] are kept
//! with the mover's score and the game's result, repeats are dropped
//! ([`Dedup`]), and each is written in a [`Format`] as soon as it is found.
//! A run is read one result's batch at a time ([`export_run`]), so memory
//! stays bounded by one batch, the dedup table and the output buffer.
//!
//! A position is a candidate when an engine moved from it and reported a
//! score: the opening's plies never are, nor a move whose score the engine
//! did not report (depth 0). Games that ended by an engine failure (time
//! forfeit, illegal move, a crash) are skipped whole: their result says
//! nothing about the positions.

use std::io::Write;

use rusqlite::Connection;
use xq_engine::rules::RuleSet;
use xq_engine::search::MATE_BOUND;
use xq_engine::{Move, Position};
use xq_proto::GameRecord;
use xq_proto::game_record::{ENGINE_FAILURES, RULE_FORFEITS};
use xq_tune::psv;
use xq_tune::{Sample, SampleResult};

use crate::store::{StoreError, games};

/// Which positions of a game are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Filters {
    /// Engine plies after the opening left out (the game's first moves,
    /// close to the book).
    pub skip_plies: u32,
    /// Leave out positions whose side to move is in check.
    pub skip_checks: bool,
    /// Leave out positions whose played (best) move captures.
    pub skip_captures: bool,
    /// Leave out scores beyond ± this many centipawns. Samples never go
    /// beyond `MAX_SCORE` (30,000), so mate scores are always left out.
    pub max_score: u32,
}

const _: () = assert!(
    xq_tune::data::MAX_SCORE < MATE_BOUND,
    "a mate score must never pass"
);

impl Default for Filters {
    /// The usual choice of OpenBench and bullet users: 8 plies, quiet
    /// positions only, |score| ≤ 3000 cp (so no mates).
    fn default() -> Filters {
        Filters {
            skip_plies: 8,
            skip_checks: true,
            skip_captures: true,
            max_score: 3000,
        }
    }
}

/// The binary and text forms of the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `fen | score | result` lines ([`xq_tune::data`]).
    Text,
    /// Fairy-Stockfish's 72-byte `.bin` records ([`xq_tune::psv`]).
    Bin,
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "text" => Ok(Format::Text),
            "bin" => Ok(Format::Bin),
            other => Err(format!(
                "unknown format {}; expected text or bin",
                xq_proto::quote(other)
            )),
        }
    }
}

/// Positions already written, by 64-bit Zobrist key (pieces and side to
/// move), in a table of `2^bits` keys (8 bytes each) with linear probing
/// over at most [`Dedup::PROBE`] slots. While the table has room the
/// deduplication is exact (bar a 64-bit key collision); once a probe finds
/// only other keys, the new key replaces one of them, so a repeat of a
/// position seen long before may pass again, as in Stockfish's
/// `gensfen`. Memory is fixed: `8 × 2^bits` bytes.
pub struct Dedup {
    keys: Vec<u64>,
    mask: u64,
}

impl std::fmt::Debug for Dedup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dedup")
            .field("slots", &self.keys.len())
            .finish()
    }
}

impl Dedup {
    /// Slots a lookup inspects.
    pub const PROBE: usize = 8;
    /// The default table: 2^24 keys, 128 MiB.
    pub const DEFAULT_BITS: u32 = 24;

    /// A table of `2^bits` keys; `bits` is clamped to `4..=32`.
    pub fn new(bits: u32) -> Dedup {
        let bits = bits.clamp(4, 32);
        Dedup {
            keys: vec![0; 1 << bits],
            mask: (1u64 << bits) - 1,
        }
    }

    /// Records `key`; whether it was new.
    pub fn insert(&mut self, key: u64) -> bool {
        let key = key.max(1);
        let start = key & self.mask;
        for i in 0..Self::PROBE as u64 {
            let slot = &mut self.keys[((start + i) & self.mask) as usize];
            if *slot == key {
                return false;
            }
            if *slot == 0 {
                *slot = key;
                return true;
            }
        }
        let victim = (start + (key >> 58) % Self::PROBE as u64) & self.mask;
        self.keys[victim as usize] = key;
        true
    }
}

/// A kept position: the sample, its move and its ply from the game's start.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    pub sample: Sample,
    pub best: Move,
    pub ply: u16,
}

/// What an export wrote and left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub games: u64,
    /// Games left out whole (engine failures).
    pub games_skipped: u64,
    /// Positions an engine scored.
    pub scored: u64,
    pub written: u64,
    pub duplicates: u64,
    /// Positions with a converted piece (capture-conversion variant), which
    /// the `.bin` format cannot carry: left out of `bin` exports.
    pub converted: u64,
}

/// Why an export stopped.
#[derive(Debug, thiserror::Error)]
pub enum DatagenExportError {
    #[error("stored game {game} of lease {lease}: {what}")]
    Game { lease: u64, game: u32, what: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("writing the output: {0}")]
    Io(#[from] std::io::Error),
}

/// The positions of `record`, played under `rules` (whose capture-conversion
/// rule the replay follows), that pass `filters`, in game order; an error
/// names what in the record does not replay.
pub fn positions(
    record: &GameRecord,
    rules: &RuleSet,
    filters: &Filters,
) -> Result<Vec<Kept>, String> {
    if ENGINE_FAILURES.contains(&record.reason) || RULE_FORFEITS.contains(&record.reason) {
        return Ok(Vec::new());
    }
    let result = SampleResult::from(record.result);
    let mut pos = Position::from_fen(&record.start_fen).map_err(|e| format!("start FEN: {e}"))?;
    pos.set_conversion(rules.conversion);
    let opening = record.opening_plies as usize;
    let mut out = Vec::new();
    for (ply, &mv) in record.moves.iter().enumerate() {
        if !pos.is_legal(mv) {
            return Err(format!("move {} at ply {ply} is illegal", mv));
        }
        if let Some(kept) = keep(&pos, mv, ply, opening, record, result, filters) {
            out.push(kept);
        }
        pos.make(mv);
    }
    Ok(out)
}

/// The position before ply `ply` if it passes `filters`.
fn keep(
    pos: &Position,
    mv: Move,
    ply: usize,
    opening: usize,
    record: &GameRecord,
    result: SampleResult,
    filters: &Filters,
) -> Option<Kept> {
    let engine_ply = ply.checked_sub(opening)?;
    let stats = record.per_move.get(engine_ply)?;
    let skipped = engine_ply < filters.skip_plies as usize
        || stats.depth == 0
        || (filters.skip_checks && pos.in_check())
        || (filters.skip_captures && pos.piece_at(mv.to()).is_some())
        || stats.score_cp.unsigned_abs() > filters.max_score;
    if skipped {
        return None;
    }
    Some(Kept {
        sample: Sample::from_side_to_move(pos.clone(), stats.score_cp, result)?,
        best: mv,
        ply: u16::try_from(ply).unwrap_or(u16::MAX),
    })
}

/// Writes kept positions in one format, deduplicated.
#[derive(Debug)]
pub struct Exporter<W: Write> {
    out: W,
    format: Format,
    filters: Filters,
    dedup: Dedup,
    counts: Counts,
}

impl<W: Write> Exporter<W> {
    pub fn new(out: W, format: Format, filters: Filters, dedup: Dedup) -> Exporter<W> {
        Exporter {
            out,
            format,
            filters,
            dedup,
            counts: Counts::default(),
        }
    }

    /// Writes the kept positions of one stored game, played under `rules`.
    pub fn game(
        &mut self,
        lease: u64,
        game: u32,
        rules: &RuleSet,
        record: &GameRecord,
    ) -> Result<(), DatagenExportError> {
        self.counts.games += 1;
        if ENGINE_FAILURES.contains(&record.reason) || RULE_FORFEITS.contains(&record.reason) {
            self.counts.games_skipped += 1;
            return Ok(());
        }
        self.counts.scored += record.per_move.iter().filter(|m| m.depth > 0).count() as u64;
        let kept = positions(record, rules, &self.filters)
            .map_err(|what| DatagenExportError::Game { lease, game, what })?;
        for k in kept {
            if self.format == Format::Bin && k.sample.position.converted_bb().any() {
                self.counts.converted += 1;
                continue;
            }
            if !self.dedup.insert(k.sample.position.hash()) {
                self.counts.duplicates += 1;
                continue;
            }
            match self.format {
                Format::Text => writeln!(self.out, "{}", k.sample)?,
                Format::Bin => psv::write(
                    &mut self.out,
                    &psv::Record {
                        sample: k.sample,
                        best: k.best,
                        ply: k.ply,
                    },
                )?,
            }
            self.counts.written += 1;
        }
        Ok(())
    }

    /// Flushes the output; what was written, and the output (to commit,
    /// say, when it is a file replaced whole).
    pub fn finish(mut self) -> Result<(Counts, W), DatagenExportError> {
        self.out.flush()?;
        Ok((self.counts, self.out))
    }
}

/// Exports every stored game of `run_id`, one result's batch at a time.
pub fn export_run<W: Write>(
    conn: &Connection,
    run_id: u64,
    exporter: &mut Exporter<W>,
) -> Result<(), DatagenExportError> {
    let run = crate::store::runs::load(conn, run_id)?;
    let mut players = crate::game_export::default_players();
    for lease in games::batch_leases(conn, run_id)? {
        let rules = crate::game_export::lease_rules(conn, &run, lease, &mut players)?;
        for g in games::load_batch(conn, run_id, lease)? {
            exporter.game(lease, g.game_index, &rules, &g.record)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_engine::rules::{GameResult, Reason};
    use xq_proto::game_record::MoveStats;

    const STANDARD: RuleSet = RuleSet::STANDARD;

    fn scored(cp: i32) -> MoveStats {
        MoveStats {
            score_cp: cp,
            depth: 5,
            nodes: 1000,
            time_ms: 1,
        }
    }

    /// Two opening plies, then: h2e2 (+20), h9g7 (−15), e2e6 (a capture,
    /// +90), a9a8 without a score, and h0g2 scored as a mate.
    fn game(result: GameResult, reason: Reason) -> GameRecord {
        let moves = ["b0c2", "b9c7", "h2e2", "h9g7", "e2e6", "a9a8", "h0g2"]
            .map(|m| Move::parse_coords(m).unwrap())
            .to_vec();
        GameRecord {
            opening_index: 0,
            start_fen: xq_engine::START_FEN.into(),
            moves,
            opening_plies: 2,
            result,
            reason,
            red_player: 0,
            per_move: vec![
                scored(20),
                scored(-15),
                scored(90),
                MoveStats::default(),
                scored(MATE_BOUND + 3),
            ],
            stderr_tail: String::new(),
            overrun_ms: None,
        }
    }

    /// The plies of the positions of `g` that `filters` keep.
    fn kept_plies(g: &GameRecord, filters: &Filters) -> Vec<u16> {
        positions(g, &STANDARD, filters)
            .unwrap()
            .iter()
            .map(|k| k.ply)
            .collect()
    }

    #[test]
    fn filters_keep_scored_quiet_positions_with_reds_score_and_result() {
        let g = game(GameResult::Black, Reason::Checkmate);
        let none = Filters {
            skip_plies: 0,
            ..Filters::default()
        };
        let kept = positions(&g, &STANDARD, &none).unwrap();
        assert_eq!(kept_plies(&g, &none), [2, 3]);
        assert_eq!(kept[0].sample.score, 20);
        assert_eq!(kept[1].sample.score, 15, "Black's −15 is +15 for Red");
        assert!(
            kept.iter()
                .all(|k| k.sample.result == SampleResult::BlackWin)
        );
        let all = Filters {
            skip_plies: 0,
            skip_checks: false,
            skip_captures: false,
            max_score: xq_tune::data::MAX_SCORE.unsigned_abs(),
        };
        assert_eq!(
            kept_plies(&g, &all),
            [2, 3, 4],
            "no score and beyond MAX_SCORE stay out"
        );
        let mut wild = g.clone();
        wild.per_move[0] = scored(i32::MIN);
        assert_eq!(
            kept_plies(&wild, &all),
            [3, 4],
            "i32::MIN is beyond every bound"
        );
        let skip_one = Filters {
            skip_plies: 1,
            ..Filters::default()
        };
        assert_eq!(positions(&g, &STANDARD, &skip_one).unwrap().len(), 1);
        let tight = Filters {
            skip_plies: 0,
            max_score: 16,
            ..Filters::default()
        };
        assert_eq!(positions(&g, &STANDARD, &tight).unwrap()[0].ply, 3);
    }

    #[test]
    fn failed_games_are_skipped_and_bad_records_named() {
        let g = game(GameResult::Red, Reason::TimeForfeit);
        assert!(
            positions(&g, &STANDARD, &Filters::default())
                .unwrap()
                .is_empty()
        );
        let mut bad = game(GameResult::Red, Reason::Checkmate);
        bad.moves[3] = Move::parse_coords("a0a5").unwrap();
        let err = positions(&bad, &STANDARD, &Filters::default()).unwrap_err();
        assert!(err.contains("ply 3"), "{err}");
    }

    #[test]
    fn repeats_are_written_once_in_either_format() {
        let g = game(GameResult::Draw, Reason::Checkmate);
        let f = Filters {
            skip_plies: 0,
            ..Filters::default()
        };
        let mut text = Exporter::new(Vec::new(), Format::Text, f, Dedup::new(10));
        text.game(1, 0, &STANDARD, &g).unwrap();
        text.game(1, 1, &STANDARD, &g).unwrap();
        let (counts, out) = text.finish().unwrap();
        assert_eq!((counts.written, counts.duplicates), (2, 2));
        let lines: Vec<Sample> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1].score, 15);
        let mut bin = Exporter::new(Vec::new(), Format::Bin, f, Dedup::new(10));
        bin.game(1, 0, &STANDARD, &g).unwrap();
        let records: Vec<psv::Record> = psv::Records::new(&bin.out[..])
            .map(Result::unwrap)
            .collect();
        assert_eq!(records.len(), 2);
        assert_eq!(records[1].sample, lines[1]);
        assert_eq!(records[1].best, Move::parse_coords("h9g7").unwrap());
    }

    #[test]
    fn bin_leaves_out_converted_pieces_and_text_keeps_them() {
        let mut g = game(GameResult::Draw, Reason::Checkmate);
        g.start_fen =
            "rnbakabnr/9/1c5c1/p1p1p1p1p/c~8/9/P1P1P1P1P/7C1/9/RNBAKABNR w - - 0 1".into();
        let rules = RuleSet {
            conversion: true,
            ..STANDARD
        };
        let f = Filters {
            skip_plies: 0,
            ..Filters::default()
        };
        let mut text = Exporter::new(Vec::new(), Format::Text, f, Dedup::new(10));
        text.game(1, 0, &rules, &g).unwrap();
        let (counts, out) = text.finish().unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(counts.written, 2);
        assert!(out.lines().all(|l| l.contains("c~")), "{out}");
        let mut bin = Exporter::new(Vec::new(), Format::Bin, f, Dedup::new(10));
        bin.game(1, 0, &rules, &g).unwrap();
        assert!(bin.out.is_empty());
        let (counts, _) = bin.finish().unwrap();
        assert_eq!((counts.written, counts.converted), (0, 2));
    }

    #[test]
    fn a_full_table_forgets_rather_than_grows() {
        let mut d = Dedup::new(4);
        assert!((1..=16).all(|k| d.insert(k)), "one slot each");
        assert!(!d.insert(3));
        assert!(d.insert(99), "a full probe replaces a key");
        assert!(!d.insert(99));
        assert!(d.insert(3), "the replaced key is forgotten");
        assert_eq!(d.keys.len(), 16);
    }
}
