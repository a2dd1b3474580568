//! The cluster with the real engine: a coordinator on 127.0.0.1:0 and worker
//! clients whose player is the game runner ([`EnginePlayer`]), playing real games.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use xq_proto::pb;
use xq_tests::cluster::{
    TempDb, TestServer, admin, create, engine_settings, fast_config, spawn_engine_worker,
    spawn_worker, wait_for_end,
};
use xq_worker::EnginePlayer;
use xq_worker::client::ClientSummary;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sprt_accepts_the_defaults_against_a_chariot_worth_300() {
    let db = TempDb::new("engine-sprt");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
    let mut admin = admin(&server.url()).await;
    let weak: HashMap<String, i64> = [("chariot_value".to_owned(), 300)].into();
    let run = create(
        &mut admin,
        pb::RunSpec {
            keep_games: Default::default(),
            name: "chariot 300".to_owned(),
            priority: 0,
            batch_pairs: 4,
            settings: Some(engine_settings(300)),
            kind: Some(pb::run_spec::Kind::Sprt(pb::SprtSpec {
                dev_params: HashMap::new(),
                base_params: weak,
                elo0: 0.0,
                elo1: 20.0,
                alpha: 0.05,
                beta: 0.05,
                model: pb::EloModel::Normalized.into(),
                max_games: 2000,
                engines: None,
            })),
            workers: None,
        },
    )
    .await;
    let (stop, handle) = spawn_engine_worker(&server.url(), 2);
    let end = wait_for_end(&mut admin, run, Duration::from_secs(120)).await;
    let sprt = end.sprt.expect("sprt status");
    assert_eq!(sprt.state(), pb::SprtState::AcceptedH1, "{end:?}");
    let totals = end.totals.clone().expect("totals");
    assert!(totals.wins > totals.losses, "{totals:?}");
    assert_eq!(totals.wins + totals.draws + totals.losses, 2 * totals.pairs);
    let _ = stop.send(());
    handle.await.expect("worker task");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spsa_moves_a_bad_chariot_value_toward_its_default() {
    let db = TempDb::new("engine-spsa");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
    let mut admin = admin(&server.url()).await;
    let start = 400.0;
    let run = create(
        &mut admin,
        pb::RunSpec {
            keep_games: Default::default(),
            name: "chariot from 400".to_owned(),
            priority: 0,
            batch_pairs: 4,
            settings: Some(engine_settings(300)),
            kind: Some(pb::run_spec::Kind::Spsa(pb::SpsaSpec {
                params: vec![pb::SpsaParam {
                    name: "chariot_value".to_owned(),
                    start,
                    min: 100.0,
                    max: 2000.0,
                    c_end: 60.0,
                    r_end: 0.02,
                    is_float: false,
                }],
                games: 240,
                ..Default::default()
            })),
            workers: None,
        },
    )
    .await;
    let (stop, handle) = spawn_engine_worker(&server.url(), 2);
    let end = wait_for_end(&mut admin, run, Duration::from_secs(120)).await;
    let theta = end.spsa.clone().expect("spsa status").theta[0].value;
    assert!(
        theta > start + 100.0,
        "θ ended at {theta}, started at {start}, default {}",
        xq_engine::params::Params::default().chariot_value
    );
    let _ = stop.send(());
    handle.await.expect("worker task");
    server.stop().await;
}

mod registry {
    use std::path::PathBuf;

    use xq_coordinator::events::Actor;
    use xq_coordinator::service::Store;
    use xq_coordinator::service::accounts::Accounts;
    use xq_coordinator::service::registry::{Begun, NewEngine, Registry, UploadQuota};
    use xq_proto::blob::BlobHeader;
    use xq_proto::{Coords, EngineRef, Protocol};
    use xq_worker::blob_cache as engine_cache;

    use super::*;

    /// Registers the built `xq-engine` as `name`; `signature_offset` falsifies the
    /// stored signature.
    async fn register(db: &std::path::Path, name: &str, signature_offset: u64) -> EngineRef {
        let path = xq_tests::binary("xq-engine");
        register_path(db, name, &path, signature_offset, None, "2").await
    }

    /// Registers the executable at `path` as `name`, with `Hash` set to `hash`.
    async fn register_path(
        db: &std::path::Path,
        name: &str,
        path: &std::path::Path,
        signature_offset: u64,
        coords: Option<Coords>,
        hash: &str,
    ) -> EngineRef {
        let bytes = std::fs::read(path).expect("read the engine");
        let signature =
            engine_cache::bench_signature(path, Protocol::Uci, &[], Duration::from_secs(300))
                .expect("bench signature");
        let engine = EngineRef {
            name: name.to_owned(),
            sha256: xq_proto::blob::sha256_hex(&bytes),
            size: bytes.len() as u64,
            signature: Some(xq_proto::Signature::Bench(signature + signature_offset)),
            protocol: Protocol::Uci,
            options: [("Hash".to_owned(), hash.to_owned())].into(),
            coords,
            binaries: Vec::new(),
            source: None,
        };
        let config = xq_worker::external::EngineConfig {
            path: path.to_owned(),
            args: Vec::new(),
            protocol: Protocol::Uci,
            options: Vec::new(),
            if_offered: Vec::new(),
            timeouts: xq_worker::external::Timeouts::default(),
            coords,
        };
        let session = xq_worker::external::ExternalEngine::start(
            &config,
            &xq_engine::rules::RuleSet::STANDARD,
        )
        .expect("handshake")
        .session()
        .clone();
        let new = NewEngine {
            engine: engine.clone(),
            spins: Vec::new(),
            variants: session.offered_variants,
        };
        // As `engine add --db` does: the registry service, as the file's
        // administrator acting for `admin`, uploads the executable (unless
        // it is stored already) and registers it.
        let store = Store::open(db).expect("store");
        let admin = Accounts::new(store.clone())
            .named_or_admin(None)
            .await
            .expect("the user admin");
        let actor = Actor::cli_for(Some(admin));
        let registry = Registry::new(
            store,
            UploadQuota {
                bytes_per_user: None,
            },
        );
        let header = BlobHeader {
            sha256: engine.sha256.clone(),
            size: engine.size,
            purpose: xq_proto::blob::UploadPurpose::Engine(engine.name.clone()),
        };
        match registry
            .begin_upload(&actor, header)
            .await
            .expect("begin the upload")
        {
            Begun::Stored { .. } => {}
            Begun::Writing(mut writer) => {
                writer.write(&bytes).await.expect("upload the engine");
                writer.finish().await.expect("finish the upload");
            }
        }
        registry.add_engine(actor, new).await.expect("add engine");
        engine
    }

    fn games(pairs: u64, dev: &str, base: &str) -> pb::RunSpec {
        pb::RunSpec {
            keep_games: Default::default(),
            name: "registered engines".to_owned(),
            priority: 0,
            batch_pairs: 2,
            settings: Some(engine_settings(300)),
            kind: Some(pb::run_spec::Kind::Games(pb::GamesSpec {
                dev_params: HashMap::new(),
                base_params: HashMap::new(),
                pairs,
                engines: Some(pb::EngineChoice {
                    dev_engine: dev.to_owned(),
                    base_engine: base.to_owned(),
                    ..Default::default()
                }),
            })),
            workers: None,
        }
    }

    fn cache(tag: &str) -> PathBuf {
        std::env::temp_dir().join(format!("xq-engine-cache-{tag}-{}", std::process::id()))
    }

    fn worker_with_cache(
        url: &str,
        cache: PathBuf,
    ) -> (oneshot::Sender<()>, tokio::task::JoinHandle<ClientSummary>) {
        spawn_worker(
            url,
            Arc::new(EnginePlayer::with_cache(2, cache).expect("threads")),
            2,
        )
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn registered_engines_are_downloaded_verified_and_played() {
        let db = TempDb::new("registry");
        let engine = register(&db.0, "new", 0).await;
        register(&db.0, "old", 0).await;
        let server =
            TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
        let mut admin = admin(&server.url()).await;
        let run = create(&mut admin, games(4, "new", "old")).await;
        let cache = cache("ok");
        let (stop, handle) = worker_with_cache(&server.url(), cache.clone());
        let end = wait_for_end(&mut admin, run, Duration::from_secs(120)).await;
        assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
        let t = end.totals.clone().expect("totals");
        assert_eq!((t.pairs, t.wins + t.draws + t.losses), (4, 8), "{t:?}");
        assert!(
            engine_cache::has(&cache, &engine.sha256),
            "the worker caches the verified engine"
        );
        let _ = stop.send(());
        handle.await.expect("worker task");
        server.stop().await;
        let _ = std::fs::remove_dir_all(cache);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_signature_mismatch_flags_and_stops_the_run() {
        let db = TempDb::new("mismatch");
        register(&db.0, "liar", 1).await;
        let server =
            TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
        let mut admin = admin(&server.url()).await;
        let run = create(&mut admin, games(4, "liar", "")).await;
        let cache = cache("mismatch");
        let (stop, handle) = worker_with_cache(&server.url(), cache.clone());
        let end = wait_for_end(&mut admin, run, Duration::from_secs(120)).await;
        assert_eq!(end.state(), pb::RunState::Stopped, "{end:?}");
        assert!(
            end.flag.contains("'liar'") && end.flag.contains("benched"),
            "{}",
            end.flag
        );
        assert_eq!(end.totals.clone().expect("totals").pairs, 0);
        let _ = stop.send(());
        handle.await.expect("worker task");
        server.stop().await;
        let _ = std::fs::remove_dir_all(cache);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_rule_set_a_registered_engine_cannot_play_is_refused_at_creation() {
        let path = &xq_tests::engines::fairy_stockfish();
        let db = TempDb::new("fairy-conversion");
        register_path(&db.0, "fairy", path, 0, None, "16").await;
        register(&db.0, "ours", 0).await;
        let server =
            TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
        let mut admin = admin(&server.url()).await;
        let conversion = |dev: &str| {
            let mut spec = games(1, dev, "");
            if let Some(s) = spec.settings.as_mut() {
                s.rules = "standard+conversion".to_owned();
            }
            spec
        };
        let err = admin
            .create_run(pb::CreateRunRequest {
                spec: Some(conversion("fairy")),
                reuse_identical: false,
            })
            .await
            .expect_err("Fairy-Stockfish offers no conversion variant");
        assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err:?}");
        assert!(
            err.message()
                .contains("engine \"fairy\" cannot play rule set \"standard+conversion\""),
            "{err:?}"
        );
        create(&mut admin, conversion("ours")).await;
        server.stop().await;
    }

    /// A real engine, registered by `register` into the database it is given
    /// (with `xq-coordinator engine add` as worker/ENGINES.md shows, whose output it
    /// returns), plays 2 pairs at `limit` against the built-in engine through a
    /// served coordinator: the worker downloads and caches it, and no game is
    /// lost to a fault.
    async fn plays_from_the_registry(
        name: &str,
        limit: pb::limit::Kind,
        register: impl FnOnce(&std::path::Path) -> String,
    ) -> String {
        let db = TempDb::new(name);
        let added = register(&db.0);
        let sha = added
            .split_whitespace()
            .skip_while(|w| *w != "sha256")
            .nth(1)
            .expect("engine add prints the sha256")
            .to_owned();
        let server =
            TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(60))).await;
        let mut admin = admin(&server.url()).await;
        let mut spec = games(2, name, "");
        spec.settings.as_mut().expect("settings").limit = Some(pb::Limit { kind: Some(limit) });
        let run = create(&mut admin, spec).await;
        let cache = cache(name);
        let (stop, handle) = worker_with_cache(&server.url(), cache.clone());
        let end = wait_for_end(&mut admin, run, Duration::from_secs(240)).await;
        assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
        let t = end.totals.clone().expect("totals");
        assert_eq!((t.pairs, t.wins + t.draws + t.losses), (2, 4), "{t:?}");
        for fault in ["illegal-move", "time-forfeit", "resignation"] {
            assert!(!t.reasons.contains_key(fault), "{fault}: {t:?}");
        }
        assert!(engine_cache::has(&cache, &sha), "the worker caches {name}");
        let _ = stop.send(());
        handle.await.expect("worker task");
        server.stop().await;
        let _ = std::fs::remove_dir_all(cache);
        added
    }

    /// Fairy-Stockfish (Debian's `fairy-stockfish`, which `tests/run` installs),
    /// registered with its 1-10 dialect stated, against the built-in engine.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn fairy_stockfish_from_the_registry_plays_through_a_served_coordinator() {
        let path = &xq_tests::engines::fairy_stockfish();
        let added = plays_from_the_registry("fairy", pb::limit::Kind::Nodes(300), |db| {
            let args = ["--coords", "1-10", "--option", "Hash=16"];
            xq_tests::engine_add(db, "fairy", path, &args)
        })
        .await;
        assert!(!added.contains("signature none"), "{added}");
    }

    /// Sjaak II (Debian's `sjaakii`, which `tests/run` installs) prints no bench
    /// count: registered without one, it plays from the registry.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sjaak_ii_registered_without_a_bench_plays_through_a_served_coordinator() {
        let path = &xq_tests::engines::sjaak();
        let added = plays_from_the_registry("sjaak", pb::limit::Kind::MovetimeMs(100), |db| {
            let args = ["--no-bench", "--coords", "1-10", "--option", "Hash=16"];
            xq_tests::engine_add(db, "sjaak", path, &args)
        })
        .await;
        assert!(added.contains("signature none (SHA-256 only)"), "{added}");
    }

    /// ElephantEye (UCCI) from the registry, its opening book an asset:
    /// `XQ_ELEEYE=path/to/eleeye-bin` with `BOOK.DAT` beside it (worker/ENGINES.md
    /// says how to build it).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs ElephantEye built from source: set XQ_ELEEYE"]
    async fn elephant_eye_registered_with_its_book_plays_through_a_served_coordinator() {
        let path = PathBuf::from(std::env::var("XQ_ELEEYE").expect(
            "XQ_ELEEYE must name an ElephantEye executable (see worker/ENGINES.md, Real engines)",
        ));
        let book = path.with_file_name("BOOK.DAT");
        assert!(book.is_file(), "no BOOK.DAT beside {}", path.display());
        let limit = pb::limit::Kind::MovetimeMs(100);
        let added = plays_from_the_registry("eleeye", limit, |db| {
            let asset = [
                "asset".as_ref(),
                "add".as_ref(),
                "--name".as_ref(),
                "eebook".as_ref(),
                book.as_os_str(),
                "--db".as_ref(),
                db.as_os_str(),
            ];
            xq_tests::coordinator_cli(asset);
            let args = [
                "--protocol",
                "ucci",
                "--no-bench",
                "--option",
                "bookfiles=asset:eebook",
            ];
            xq_tests::engine_add(db, "eleeye", &path, &args)
        })
        .await;
        assert!(added.contains("signature none (SHA-256 only)"), "{added}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_unknown_engine_is_refused_at_creation() {
        let db = TempDb::new("unknown-engine");
        let server =
            TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
        let mut admin = admin(&server.url()).await;
        let err = admin
            .create_run(pb::CreateRunRequest {
                spec: Some(games(2, "ghost", "")),
                reuse_identical: false,
            })
            .await
            .expect_err("unknown engine");
        assert_eq!(err.code(), tonic::Code::NotFound, "{err:?}");
        assert!(err.message().contains("\"ghost\""), "{err:?}");
        server.stop().await;
    }
}
