//! External engines as real processes: the built `xq-engine` over UCI and UCCI,
//! and small fake engines (shell scripts) that crash, hang or print garbage.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use xq_engine::{Move, START_FEN};
use xq_tests::binary;
use xq_worker::external::{EngineConfig, EngineFailure, ExternalEngine, Go, Protocol, Timeouts};

fn config(path: PathBuf, protocol: Protocol) -> EngineConfig {
    EngineConfig {
        path,
        args: Vec::new(),
        protocol,
        options: vec![("Hash".to_owned(), "4".to_owned())],
        timeouts: Timeouts {
            startup_ms: 5_000,
            ready_ms: 2_000,
            search_ms: 2_000,
            margin_ms: 500,
        },
    }
}

/// A fake engine: a shell script with `body`, made executable in a temp dir.
fn script(name: &str, body: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xq-fake-engines-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// A fake UCI engine that handshakes properly, then answers `go` with `reply`.
fn fake_uci(name: &str, reply: &str) -> PathBuf {
    script(
        name,
        &format!(
            r#"while read -r line; do
  case "$line" in
    uci) echo "id name {name}"; echo uciok ;;
    isready) echo readyok ;;
    go*) {reply} ;;
    quit) exit 0 ;;
  esac
done"#
        ),
    )
}

#[test]
fn the_built_engine_plays_over_uci_and_ucci() {
    for protocol in [Protocol::Uci, Protocol::Ucci] {
        let mut cfg = config(binary("xq-engine"), protocol);
        if protocol == Protocol::Ucci {
            cfg.options = vec![("hashsize".to_owned(), "4".to_owned())];
        }
        let mut engine = ExternalEngine::start(&cfg).expect("engine starts");
        assert!(engine.name().is_some_and(|n| n.starts_with("xq-engine")));
        engine.new_game().expect("new game");
        let moves = [Move::parse_coords("h2e2").unwrap()];
        let reply = engine
            .go(START_FEN, &moves, Go::Nodes(2000), None)
            .expect("a move");
        let text = reply.bestmove.clone().expect("a move, not none");
        let mut pos = xq_engine::Position::startpos();
        pos.make(moves[0]);
        assert!(
            Move::parse_coords(&text).is_some_and(|m| pos.is_legal(m)),
            "{text}"
        );
        assert!(
            reply.info.depth.is_some() && reply.info.score_cp.is_some(),
            "{reply:?}"
        );
    }
}

#[test]
fn a_crash_at_start_up_is_reported() {
    let path = script("crash", "echo 'segfault, sorry' >&2; exit 3");
    match ExternalEngine::start(&config(path, Protocol::Uci)) {
        Err(EngineFailure::Exited { what }) => assert_eq!(what, "the handshake"),
        other => panic!("expected an exit during the handshake, got {other:?}"),
    }
    let missing = ExternalEngine::start(&config("/no/such/engine".into(), Protocol::Uci));
    assert!(
        matches!(missing, Err(EngineFailure::Spawn { .. })),
        "{missing:?}"
    );
}

#[test]
fn a_hang_in_the_handshake_times_out() {
    let path = script("mute", "sleep 30");
    let mut cfg = config(path, Protocol::Uci);
    cfg.timeouts.startup_ms = 300;
    let started = std::time::Instant::now();
    let r = ExternalEngine::start(&cfg);
    assert!(
        matches!(
            r,
            Err(EngineFailure::Timeout {
                what: "the handshake",
                ..
            })
        ),
        "{r:?}"
    );
    assert!(started.elapsed().as_secs() < 5);
}

#[test]
fn a_hang_mid_game_times_out_and_stderr_is_kept() {
    let path = fake_uci("sleepy", "echo 'thinking hard' >&2; sleep 30");
    let mut engine = ExternalEngine::start(&config(path, Protocol::Uci)).expect("handshake");
    let r = engine.go(START_FEN, &[], Go::MoveTimeMs(100), Some(100));
    assert!(
        matches!(
            r,
            Err(EngineFailure::Timeout {
                what: "a search",
                after_ms: 600
            })
        ),
        "{r:?}"
    );
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(
        engine.stderr_tail().iter().any(|l| l == "thinking hard"),
        "{:?}",
        engine.stderr_tail()
    );
}

#[test]
fn garbage_and_illegal_moves_are_told_apart() {
    let path = fake_uci("chatty", "echo 'I am a teapot'");
    let mut engine = ExternalEngine::start(&config(path, Protocol::Uci)).expect("handshake");
    let r = engine.go(START_FEN, &[], Go::Nodes(10), None);
    assert!(
        matches!(&r, Err(EngineFailure::Protocol { line, .. }) if line == "I am a teapot"),
        "{r:?}"
    );

    let path = fake_uci(
        "cheat",
        "echo 'info depth 1 score cp 9999'; echo 'bestmove a0a9'",
    );
    let mut engine = ExternalEngine::start(&config(path, Protocol::Uci)).expect("handshake");
    let reply = engine
        .go(START_FEN, &[], Go::Nodes(10), None)
        .expect("a reply");
    assert_eq!(reply.bestmove.as_deref(), Some("a0a9"));
    assert_eq!(reply.info.score_cp, Some(9999));
    let legal =
        Move::parse_coords("a0a9").is_some_and(|m| xq_engine::Position::startpos().is_legal(m));
    assert!(!legal, "the arbiter, not the engine, must reject a0a9");
}

mod matches {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    use xq_engine::Params;
    use xq_engine::rules::RuleSet;
    use xq_proto::{Adjudication, Limit};
    use xq_worker::external::EngineConfig;
    use xq_worker::openings::{OpeningBook, Order};
    use xq_worker::runner::{MatchOutcome, MatchSpec, PlayerConfig, Runner};

    use super::*;

    fn player(name: &str, engine: Option<EngineConfig>) -> PlayerConfig {
        PlayerConfig {
            name: name.to_owned(),
            params: Params::default(),
            limit: Limit::Nodes(300),
            hash_mb: 1,
            engine,
            draw_contempt: true,
        }
    }

    fn play(dev: Option<EngineConfig>, pairs: u64) -> MatchOutcome {
        let spec = MatchSpec {
            players: [player("dev", dev), player("base", None)],
            rules: RuleSet::default(),
            pairs,
            openings: OpeningBook::Builtin { random_plies: 2 },
            order: Order::Sequential,
            seed: 9,
            offset: 0,
            adjudication: Adjudication::default(),
            keep_games: true,
            opening_per_game: false,
        };
        let runner = Runner::new(2).expect("runner");
        runner
            .play(&spec, &Arc::new(AtomicBool::new(false)), &|_, _| {})
            .expect("match")
    }

    fn exact(o: &MatchOutcome, pairs: u64) {
        let t = &o.totals;
        assert_eq!((t.pairs, t.games()), (pairs, 2 * pairs), "{t:?}");
        assert_eq!(t.pentanomial.iter().sum::<u64>(), t.pairs);
        assert_eq!(t.reasons.values().sum::<u64>(), t.games());
    }

    #[test]
    fn the_built_engine_as_an_external_player_mirrors_the_built_in_one() {
        let o = play(Some(config(binary("xq-engine"), Protocol::Uci)), 3);
        exact(&o, 3);
        // Same engine, same node limit, colours swapped: every pair scores 1.
        assert_eq!(o.totals.pentanomial, [0, 0, 3, 0, 0], "{:?}", o.totals);
    }

    #[test]
    fn failing_engines_lose_every_game_with_the_reason_recorded() {
        let cases = [
            ("crash", script("crash-match", "exit 3"), "resignation"),
            ("hang", fake_uci("hang-match", "sleep 30"), "time-forfeit"),
            (
                "illegal",
                fake_uci("illegal-match", "echo 'bestmove a0a9'"),
                "illegal-move",
            ),
            (
                "garbage",
                fake_uci("garbage-match", "echo 'bestmove ???'"),
                "illegal-move",
            ),
        ];
        for (what, path, reason) in cases {
            let mut cfg = config(path, Protocol::Uci);
            cfg.timeouts.search_ms = 300;
            let o = play(Some(cfg), 2);
            exact(&o, 2);
            assert_eq!(
                (o.totals.losses, o.totals.reasons.get(reason)),
                (4, Some(&4)),
                "{what}: {:?}",
                o.totals
            );
        }
    }
}
