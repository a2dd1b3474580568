//! External engines as real processes: the built `xq-engine` over UCI and UCCI,
//! and small fake engines (shell scripts) that crash, hang or print garbage.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use xq_engine::rules::RuleSet;
use xq_engine::{Move, START_FEN};
use xq_tests::binary;
use xq_worker::external::{
    Coords, EngineConfig, EngineFailure, ExternalEngine, Go, Protocol, ProtocolText, Timeouts,
};

fn config(path: PathBuf, protocol: Protocol) -> EngineConfig {
    EngineConfig {
        path,
        args: Vec::new(),
        protocol,
        options: vec![("Hash".to_owned(), "4".to_owned())],
        if_offered: Vec::new(),
        timeouts: Timeouts {
            startup_ms: 5_000,
            ready_ms: 2_000,
            search_ms: 2_000,
            margin_ms: 500,
            overrun_wait_ms: 300,
        },
        coords: None,
    }
}

fn start(cfg: &EngineConfig) -> Result<ExternalEngine, EngineFailure> {
    ExternalEngine::start(cfg, &RuleSet::STANDARD)
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

/// A fake UCI engine that handshakes properly, answers the start-up probe
/// (`go depth 1` from the start position) with `h2e2`, then answers `go` with
/// `reply`.
fn fake_uci(name: &str, reply: &str) -> PathBuf {
    script(
        name,
        &format!(
            r#"while read -r line; do
  case "$line" in
    uci) echo "id name {name}"; echo uciok ;;
    isready) echo readyok ;;
    "go depth 1") echo "bestmove h2e2" ;;
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
        let mut engine = start(&cfg).expect("engine starts");
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
    match start(&config(path, Protocol::Uci)) {
        Err(EngineFailure::Exited { what }) => assert_eq!(what, "the handshake"),
        other => panic!("expected an exit during the handshake, got {other:?}"),
    }
    let missing = start(&config("/no/such/engine".into(), Protocol::Uci));
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
    let r = start(&cfg);
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
    let mut engine = start(&config(path, Protocol::Uci)).expect("handshake");
    let r = engine.go(START_FEN, &[], Go::MoveTimeMs(100), Some(100));
    assert!(
        matches!(
            r,
            Err(EngineFailure::Timeout {
                what: "a search",
                after_ms: 900
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
fn a_timed_move_within_the_margin_counts_and_one_beyond_it_loses_by_its_overrun() {
    let mut cfg = config(
        fake_uci("slowpoke", "sleep 0.4; echo 'bestmove h2e2'"),
        Protocol::Uci,
    );
    cfg.timeouts.margin_ms = 100;
    cfg.timeouts.overrun_wait_ms = 2_000;
    let mut engine = start(&cfg).expect("handshake");
    match engine.go(START_FEN, &[], Go::MoveTimeMs(100), Some(100)) {
        Err(EngineFailure::Overran {
            elapsed_ms,
            allotted_ms: 100,
            margin_ms: 100,
        }) => assert!((400..2_000).contains(&elapsed_ms), "{elapsed_ms}"),
        other => panic!("expected an overrun, got {other:?}"),
    }
    let overrun = xq_worker::runner::forfeit(&EngineFailure::Overran {
        elapsed_ms: 437,
        allotted_ms: 100,
        margin_ms: 100,
    });
    assert_eq!(
        overrun,
        xq_worker::runner::Fault::TimeLoss {
            overrun_ms: 337,
            killed: false
        }
    );
    let reply = engine
        .go(START_FEN, &[], Go::MoveTimeMs(1_000), Some(1_000))
        .expect("within the allotment: the engine was kept and answers");
    assert!(
        reply.elapsed >= std::time::Duration::from_millis(400),
        "{reply:?}"
    );
}

#[test]
fn garbage_and_illegal_moves_are_told_apart() {
    let path = fake_uci("chatty", "echo 'I am a teapot'");
    let mut engine = start(&config(path, Protocol::Uci)).expect("handshake");
    let r = engine.go(START_FEN, &[], Go::Nodes(10), None);
    assert!(
        matches!(&r, Err(EngineFailure::Protocol { line, .. }) if line == "I am a teapot"),
        "{r:?}"
    );

    let path = fake_uci(
        "cheat",
        "echo 'info depth 1 score cp 9999'; echo 'bestmove a0a9'",
    );
    let mut engine = start(&config(path, Protocol::Uci)).expect("handshake");
    let reply = engine
        .go(START_FEN, &[], Go::Nodes(10), None)
        .expect("a reply");
    assert_eq!(reply.bestmove.as_deref(), Some("a0a9"));
    assert_eq!(reply.info.score_cp, Some(9999));
    let legal =
        Move::parse_coords("a0a9").is_some_and(|m| xq_engine::Position::startpos().is_legal(m));
    assert!(!legal, "the arbiter, not the engine, must reject a0a9");
}

/// A fake engine that logs every command it reads to `<path>.log`, declares
/// `options` in its handshake and answers `go` with `bestmove <reply>` (the
/// start-up probe with `probe`).
fn logging_engine(
    name: &str,
    protocol: Protocol,
    options: &str,
    probe: &str,
    reply: &str,
) -> PathBuf {
    let (hello, ok) = protocol.handshake();
    let log = std::env::temp_dir()
        .join(format!("xq-fake-engines-{}", std::process::id()))
        .join(format!("{name}.log"));
    let _ = std::fs::remove_file(&log);
    script(
        name,
        &format!(
            r#"while read -r line; do
  echo "$line" >> '{log}'
  case "$line" in
    {hello}) echo "id name {name}"; printf '%s\n' {options}; echo {ok} ;;
    isready) echo readyok ;;
    "go depth 1") echo "bestmove {probe}" ;;
    go*) echo "info depth 2 score cp 12 pv {reply} h10g8"; echo "bestmove {reply}" ;;
    quit) exit 0 ;;
  esac
done"#,
            log = log.display()
        ),
    )
}

fn log_of(engine: &std::path::Path) -> Vec<String> {
    let log = engine.with_file_name(format!(
        "{}.log",
        engine.file_name().unwrap().to_string_lossy()
    ));
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

const FAIRY_OPTIONS: &str = "'option name Hash type spin default 16 min 1 max 64' \
    'option name UCI_Variant type combo default chess var chess var janggi var xiangqi'";

#[test]
fn a_one_based_engine_is_detected_set_to_xiangqi_and_translated_both_ways() {
    let path = logging_engine("fairy-like", Protocol::Uci, FAIRY_OPTIONS, "h1g3", "c4c5");
    let mut engine = start(&config(path.clone(), Protocol::Uci)).expect("handshake");
    let s = engine.session();
    assert_eq!(
        (s.coords, s.coords_detected, s.variant.as_deref()),
        (Coords::FromOne, true, Some("xiangqi"))
    );
    let moves = ["h2e2", "h9g7"].map(|m| Move::parse_coords(m).unwrap());
    let reply = engine
        .go(START_FEN, &moves, Go::Nodes(100), None)
        .expect("a reply");
    assert_eq!(reply.bestmove.as_deref(), Some("c4c5"));
    assert_eq!(
        reply.pv,
        ["c3c4", "h9g7"].map(|m| Move::parse_coords(m).unwrap())
    );
    let log = log_of(&path);
    let at = |line: &str| log.iter().position(|l| l == line);
    let variant = at("setoption name UCI_Variant value xiangqi").expect("variant set");
    assert!(at("uci") < Some(variant), "{log:?}");
    assert!(Some(variant) < at("isready"), "{log:?}");
    assert!(
        log.iter().any(|l| l
            == "position fen rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR w - - 0 1 \
                moves h3e3 h10g8"),
        "{log:?}"
    );
}

#[test]
fn a_mis_declared_dialect_is_named_before_the_first_game() {
    let mut cfg = config(binary("xq-engine"), Protocol::Uci);
    cfg.coords = Some(Coords::FromOne);
    match start(&cfg) {
        Err(e @ EngineFailure::Dialect { .. }) => {
            let text = e.to_string();
            assert!(text.contains("illegal with ranks numbered 1-10"), "{text}");
            assert!(text.contains("numbers ranks 0-9"), "{text}");
            assert!(e.is_setting());
        }
        other => panic!("expected a dialect error, got {other:?}"),
    }
    let path = logging_engine("fairy-as-0-9", Protocol::Uci, FAIRY_OPTIONS, "h1g3", "c4c5");
    let mut cfg = config(path, Protocol::Uci);
    cfg.coords = Some(Coords::FromZero);
    let e = start(&cfg).expect_err("a 1-10 engine stated as 0-9");
    assert!(
        e.to_string()
            .contains("'h1g3', illegal with ranks numbered 0-9 but legal with ranks numbered 1-10"),
        "{e}"
    );
}

#[test]
fn capture_conversion_is_refused_by_a_plain_xiangqi_engine_and_told_to_xq_engine() {
    let path = logging_engine("fairy-conv", Protocol::Uci, FAIRY_OPTIONS, "h1g3", "c4c5");
    let conversion: RuleSet = "conversion".parse().unwrap();
    let e = ExternalEngine::start(&config(path, Protocol::Uci), &conversion)
        .expect_err("no conversion variant");
    let text = e.to_string();
    assert!(
        text.contains("engine 'fairy-conv' cannot play rule set 'standard+conversion'"),
        "{text}"
    );
    assert!(e.is_setting());
    let engine = ExternalEngine::start(&config(binary("xq-engine"), Protocol::Uci), &conversion)
        .expect("xq-engine offers the variant");
    assert_eq!(
        engine.session().variant.as_deref(),
        Some("standard+conversion")
    );
}

#[test]
fn ucci_clocks_are_in_seconds_unless_the_engine_offers_usemillisec() {
    let clock = Go::Clock {
        time_ms: [9_500, 8_000],
        inc_ms: [1_500, 1_500],
        mover: xq_engine::Color::Red,
        moves_to_go: None,
    };
    for (name, options, time, setoption) in [
        (
            "ucci-seconds",
            "'option hashsize type spin min 1 max 64 default 16'",
            "go time 9 increment 1 opptime 8 oppincrement 1",
            false,
        ),
        (
            "ucci-millis",
            "'option usemillisec type check default false'",
            "go time 9500 increment 1500 opptime 8000 oppincrement 1500",
            true,
        ),
    ] {
        let path = logging_engine(name, Protocol::Ucci, options, "h2e2", "h2e2");
        let mut engine = start(&config(path.clone(), Protocol::Ucci)).expect("handshake");
        engine
            .go(START_FEN, &[], clock, Some(9_500))
            .expect("a reply");
        let log = log_of(&path);
        assert!(log.iter().any(|l| l == time), "{name}: {log:?}");
        assert_eq!(
            log.iter().any(|l| l == "setoption usemillisec true"),
            setoption,
            "{name}: {log:?}"
        );
    }
}

mod matches {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    use xq_engine::Params;
    use xq_engine::rules::RuleSet;
    use xq_games::openings::{OpeningBook, Order};
    use xq_proto::BatchOutcome;
    use xq_proto::{Adjudication, Limit};
    use xq_worker::external::EngineConfig;
    use xq_worker::runner::{MatchSpec, PlayerConfig, Runner};

    use super::*;

    fn player(name: &str, engine: Option<EngineConfig>) -> PlayerConfig {
        PlayerConfig {
            name: name.to_owned(),
            params: Params::default(),
            limit: Limit::Nodes(300),
            hash_mb: 1,
            threads: 1,
            engine,
            draw_contempt: true,
        }
    }

    fn play(dev: Option<EngineConfig>, pairs: u64) -> BatchOutcome {
        play_with(player("dev", dev), pairs)
    }

    fn play_with(dev: PlayerConfig, pairs: u64) -> BatchOutcome {
        let spec = MatchSpec {
            players: [dev, player("base", None)],
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
            .outcome
    }

    fn exact(o: &BatchOutcome, pairs: u64) {
        let t = &o.totals;
        assert_eq!((t.pairs, t.games()), (pairs, 2 * pairs), "{t:?}");
        assert_eq!(t.pentanomial.pairs(), t.pairs);
        assert_eq!(t.reasons.values().sum::<u64>(), t.games());
    }

    #[test]
    fn the_built_engine_as_an_external_player_mirrors_the_built_in_one() {
        let o = play(Some(config(binary("xq-engine"), Protocol::Uci)), 3);
        exact(&o, 3);
        // Same engine, same node limit, colours swapped: every pair scores 1.
        assert_eq!(o.totals.pentanomial.0, [0, 0, 3, 0, 0], "{:?}", o.totals);
    }

    #[test]
    fn a_time_loss_carries_its_overrun_into_the_archived_game() {
        let mut cfg = config(
            fake_uci("overrun-match", "sleep 0.4; echo 'bestmove h2e2'"),
            Protocol::Uci,
        );
        cfg.timeouts.margin_ms = 50;
        cfg.timeouts.overrun_wait_ms = 2_000;
        let mut dev = player("dev", Some(cfg));
        dev.limit = Limit::MoveTimeMs(100);
        let o = play_with(dev, 1);
        exact(&o, 1);
        assert_eq!(
            o.totals.reasons.get("time-forfeit"),
            Some(&2),
            "{:?}",
            o.totals
        );
        for g in &o.games {
            let archived = g.clone();
            let ms = archived.overrun_ms.expect("a time forfeit's overrun");
            assert!((250..2_000).contains(&ms), "overrun {ms} ms");
            let wire = xq_proto::pb::GameRecord::from(archived.clone());
            assert_eq!(xq_proto::GameRecord::try_from(wire), Ok(archived));
        }
        let o = play(None, 1);
        assert!(o.games.iter().all(|g| g.overrun_ms.is_none()));
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
                (o.totals.wdl.losses, o.totals.reasons.get(reason)),
                (4, Some(&4)),
                "{what}: {:?}",
                o.totals
            );
        }
    }
}
