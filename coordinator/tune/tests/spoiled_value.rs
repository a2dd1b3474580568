//! Issue 36's test of Texel tuning: positions exported from the built-in
//! engine's own games, scored by its search with the default parameters, bring
//! a deliberately spoiled piece value back near its default.

use std::fs::File;
use std::io::{BufReader, Write};

use rayon::prelude::*;
use xq_engine::search::{HistoryEntry, SearchRules};
use xq_engine::{Game, Limits, Params, RuleSet, Searcher};
use xq_tune::texel::{FitOptions, Holdout, Lambda, Selection, fit, load};
use xq_tune::{Sample, SampleResult};

/// Random plies opening each game, so that the games differ.
const OPENING_PLIES: usize = 6;
/// Games still going after this many plies count as draws.
const MAX_PLIES: usize = 140;
const GAMES: u64 = 96;
const DEPTH: u32 = 3;

/// Self-play with the default parameters at a fixed depth (deterministic):
/// every position after the opening with its search score, as text lines,
/// games in parallel.
fn export(games: u64) -> String {
    (0..games)
        .into_par_iter()
        .map(export_game)
        .collect::<Vec<String>>()
        .concat()
}

/// Game `g` of [`export`].
fn export_game(g: u64) -> String {
    let params = Params::default();
    let rules = RuleSet::default();
    let search_rules = SearchRules::scoring_aware(&rules, false);
    let mut searcher = Searcher::new(4);
    let mut text = String::new();
    let mut game = Game::new(xq_engine::Position::startpos(), rules);
    let mut state = g.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut history = vec![HistoryEntry::of(game.position(), None)];
    let mut scored = Vec::new();
    let mut outcome = None;
    for ply in 0..MAX_PLIES {
        let mut pos = game.position().clone();
        let mv = if ply < OPENING_PLIES {
            let moves = pos.legal_moves();
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            moves[(state >> 33) as usize % moves.len()]
        } else {
            let r = searcher.search(
                &mut pos,
                &history,
                &Limits::depth(DEPTH),
                &params,
                &search_rules,
                |_| {},
            );
            scored.push((pos.clone(), r.score));
            r.best_move.expect("a game in progress has a legal move")
        };
        outcome = game.play(mv).expect("the engine's move is legal");
        history.push(HistoryEntry::of(game.position(), Some(mv)));
        if outcome.is_some() {
            break;
        }
    }
    let result = outcome.map_or(SampleResult::Draw, |o| o.result.into());
    for (pos, score) in scored {
        if let Some(s) = Sample::from_side_to_move(pos, score, result) {
            text.push_str(&format!("{s}\n"));
        }
    }
    text
}

/// Not a test: writes `XQ_TEXEL_GAMES` games' positions (default 2000) to
/// the file `XQ_TEXEL_EXPORT`, the data TUNING.md's speed was measured on.
#[test]
#[ignore = "writes a data file for measuring; run with --ignored"]
fn export_for_measuring() {
    let path = std::env::var("XQ_TEXEL_EXPORT").expect("XQ_TEXEL_EXPORT names the file to write");
    let games =
        std::env::var("XQ_TEXEL_GAMES").map_or(2000, |g| g.parse().expect("a number of games"));
    std::fs::write(path, export(games)).unwrap();
}

/// The horse's value, halved (362 → 181 cp), fitted alone from the exported
/// positions, comes back towards its default:
/// - to within 5 % against the engine's scores alone (λ = 1): they are the
///   default parameters' depth-3 searches, which a horse value near the
///   default explains best; the search's additions to the static evaluation
///   are what the 5 % leave room for (354 cp with the second Texel pass's
///   defaults, 8 cp short);
/// - more than half of the way back (within a quarter of the default) with a
///   quarter of the target from the results of these 96 short games
///   (λ = 0.75). Their few decisive results say what a horse was worth in
///   these games, not what the defaults were fitted to, and they pull the
///   value (to 385 cp with the second Texel pass's defaults, 295 with the
///   defaults before it; from 24 games, 239, which is why the test plays 96),
///   so only the direction and most of the distance are the claim.
///
/// Either way the spoiled start is 181 cp away, and the loss falls on the
/// training and on the held-out positions.
#[test]
fn a_halved_horse_value_is_recovered() {
    let path = std::env::temp_dir().join(format!("xq-texel-{}.txt", std::process::id()));
    File::create(&path)
        .and_then(|mut f| f.write_all(export(GAMES).as_bytes()))
        .unwrap();
    let default = Params::default().horse_value;
    let mut start = Params::default();
    start.set("horse_value", i64::from(default / 2)).unwrap();
    let selection = Selection::parse("horse_value").unwrap();
    let data = load(
        BufReader::new(File::open(&path).unwrap()),
        &start,
        &selection,
        Holdout::DEFAULT,
    )
    .unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(data.train.len() > 1000, "{} positions", data.train.len());
    assert!(!data.holdout.is_empty());
    for (lambda, bound) in [(1.0, default / 20), (0.75, default / 4)] {
        let options = FitOptions {
            lambda: Lambda::new(lambda).unwrap(),
            iterations: 400,
            rate: 2.0,
        };
        let fit = fit(&data, &start, &selection, &options, |_| {}).unwrap();
        let tuned = fit.params.horse_value;
        eprintln!(
            "λ {lambda}: horse_value {} -> {tuned} (default {default}), {} positions, K {}, loss {:?} -> {:?}",
            start.horse_value,
            data.train.len(),
            fit.k,
            fit.before,
            fit.after
        );
        assert!(
            (tuned - default).abs() <= bound,
            "λ {lambda}: {tuned} vs {default}"
        );
        assert!(fit.after.train < fit.before.train);
        assert!(fit.after.holdout < fit.before.holdout);
        let mut rest = fit.params.clone();
        rest.horse_value = default;
        assert_eq!(rest, Params::default(), "only the chosen parameter moves");
    }
}
