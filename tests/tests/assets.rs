//! Assets of the registry end to end: `xq-coordinator asset add` and `engine
//! add --option ParamFile=asset:…` on a database (xq-engine's `ParamFile` is
//! the stand-in for Pikafish's `EvalFile` network), a served coordinator, and a
//! worker that downloads, verifies and caches the engine, its asset and an
//! opening book named by its hash.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use xq_proto::{OpeningSource, pb};
use xq_tests::cluster::{
    TempDb, TestServer, WORKER_TOKEN, admin, create, engine_settings, fast_config, spawn_worker,
    status, wait_for_end, worker_client,
};
use xq_worker::EnginePlayer;
use xq_worker::blob_cache;

/// Runs `xq-coordinator ARGS`; its stdout, or its stderr as the error.
fn coordinator(args: &[&str]) -> Result<String, String> {
    let out = Command::new(xq_tests::binary("xq-coordinator"))
        .args(args)
        .output()
        .expect("run xq-coordinator");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    if out.status.success() {
        Ok(text(&out.stdout))
    } else {
        Err(text(&out.stderr))
    }
}

/// The `sha256 X` and `signature N` words of an `asset add`/`engine add` line.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == key).expect(key);
    words[at + 1]
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("xq-assets-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const START: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";

/// A registry with `plain` (xq-engine), `tuned` (xq-engine with the parameter
/// file `params.toml` as its `ParamFile` asset) and the book `book.epd`.
struct Registry {
    db: TempDb,
    files: TempDir,
    params_sha: String,
    book_sha: String,
    engine_sha: String,
    plain_signature: u64,
    tuned_signature: u64,
}

fn registry(tag: &str) -> Registry {
    let db = TempDb::new(tag);
    let files = TempDir::new(tag);
    let dbs = db.0.to_str().unwrap();
    let params = files.0.join("params.toml");
    std::fs::write(&params, "chariot_value = 700\nhorse_value = 350\n").unwrap();
    let book = files.0.join("book.epd");
    std::fs::write(
        &book,
        format!("# two openings\n{START} moves h2e2 h9g7\n{START} moves b2e2 b9c7\n"),
    )
    .unwrap();
    let added = coordinator(&["asset", "add", params.to_str().unwrap(), "--db", dbs]).unwrap();
    assert!(added.starts_with("params.toml sha256 "), "{added}");
    let params_sha = field(&added, "sha256").to_owned();
    let added = coordinator(&["asset", "add", book.to_str().unwrap(), "--db", dbs]).unwrap();
    let book_sha = field(&added, "sha256").to_owned();
    let listed = coordinator(&["asset", "list", "--db", dbs]).unwrap();
    assert!(
        listed.contains(&format!("book.epd\t{book_sha}")) && listed.contains(&params_sha),
        "{listed}"
    );

    let engine = xq_tests::binary("xq-engine");
    let engine = engine.to_str().unwrap();
    let add = |name: &str, options: &[&str]| {
        let mut args = vec![
            "engine", "add", name, engine, "--db", dbs, "--option", "Hash=2",
        ];
        for o in options {
            args.extend(["--option", o]);
        }
        coordinator(&args)
    };
    let plain = add("plain", &[]).unwrap();
    let tuned = add("tuned", &["ParamFile=asset:params.toml"]).unwrap();
    let engine_sha = field(&plain, "sha256").to_owned();
    assert_eq!(
        field(&tuned, "sha256"),
        engine_sha,
        "one executable, stored once"
    );
    Registry {
        db,
        files,
        params_sha,
        book_sha,
        engine_sha,
        plain_signature: field(&plain, "signature").parse().unwrap(),
        tuned_signature: field(&tuned, "signature").parse().unwrap(),
    }
}

fn games(book: &str) -> pb::RunSpec {
    let mut settings = engine_settings(300);
    settings.openings = Some(
        OpeningSource::Book {
            sha256: book.to_owned(),
            random_plies: 0,
        }
        .into(),
    );
    pb::RunSpec {
        name: "assets".to_owned(),
        keep_games: Default::default(),
        workers: None,
        priority: 0,
        batch_pairs: 2,
        settings: Some(settings),
        kind: Some(pb::run_spec::Kind::Games(pb::GamesSpec {
            dev_params: HashMap::new(),
            base_params: HashMap::new(),
            pairs: 2,
            engines: Some(pb::EngineChoice {
                dev_engine: "tuned".to_owned(),
                base_engine: "plain".to_owned(),
                ..Default::default()
            }),
        })),
    }
}

fn cached(cache: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cache)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_with_its_parameter_file_and_a_book_are_fetched_once_and_played() {
    let r = registry("played");
    assert_ne!(
        r.plain_signature, r.tuned_signature,
        "the parameter file changes the bench: it took effect"
    );
    let server =
        TestServer::start("127.0.0.1:0", &r.db.0, fast_config(Duration::from_secs(30))).await;
    let mut admin = admin(&server.url()).await;
    let run = create(&mut admin, games(&r.book_sha)).await;
    let cache = r.files.0.join("cache");
    let player = Arc::new(EnginePlayer::with_cache(2, cache.clone()).expect("threads"));
    let (stop, handle) = spawn_worker(&server.url(), player, 2);
    let end = wait_for_end(&mut admin, run, Duration::from_secs(180)).await;
    assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
    let t = end.totals.clone().expect("totals");
    assert_eq!((t.pairs, t.wins + t.draws + t.losses), (2, 4), "{t:?}");
    for fault in ["illegal-move", "time-forfeit", "resignation"] {
        assert!(!t.reasons.contains_key(fault), "{fault}: {t:?}");
    }
    let _ = stop.send(());
    let summary = handle.await.expect("worker task");
    assert_eq!(summary.leases_accepted, 1, "{summary:?}");
    let mut want = vec![
        r.engine_sha.clone(),
        r.params_sha.clone(),
        r.book_sha.clone(),
    ];
    want.sort();
    assert_eq!(
        cached(&cache),
        want,
        "engine, network and book, verified, nothing else"
    );
    for sha in &want {
        assert!(blob_cache::has(&cache, sha));
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupted_chunk_is_refused_and_never_cached() {
    let r = registry("corrupt");
    let conn = rusqlite::Connection::open(&r.db.0).unwrap();
    let changed = conn
        .execute(
            "UPDATE blob_chunks SET data = CAST('chariot_value = 701' || substr(data, 20) AS BLOB)
              WHERE sha256 = ?1 AND seq = 0",
            [&r.params_sha],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(conn);
    let server =
        TestServer::start("127.0.0.1:0", &r.db.0, fast_config(Duration::from_secs(30))).await;
    let mut admin = admin(&server.url()).await;
    let run = create(&mut admin, games(&r.book_sha)).await;
    let cache = r.files.0.join("cache");
    let player = Arc::new(EnginePlayer::with_cache(2, cache.clone()).expect("threads"));
    let (stop, handle) = spawn_worker(&server.url(), player, 2);
    // The worker downloads the engine and the book, refuses the network and
    // hands the lease back, again and again.
    let mut waited = Duration::ZERO;
    while !cached(&cache).contains(&r.book_sha) && waited < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += Duration::from_millis(100);
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let _ = stop.send(());
    let summary = handle.await.expect("worker task");
    assert_eq!(summary.leases_accepted, 0, "{summary:?}");
    assert!(summary.leases_dropped >= 1, "{summary:?}");
    let s = status(&mut admin, run).await;
    assert_eq!(s.totals.map_or(0, |t| t.pairs), 0);
    let mut want = vec![r.engine_sha.clone(), r.book_sha.clone()];
    want.sort();
    assert_eq!(
        cached(&cache),
        want,
        "no copy, not even a partial one, of the network"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_assets_and_bad_books_are_refused_by_name() {
    let r = registry("refused");
    let dbs = r.db.0.to_str().unwrap();
    let engine = xq_tests::binary("xq-engine");
    let engine = engine.to_str().unwrap();
    let add_with = |name: &str, option: &str| {
        coordinator(&[
            "engine", "add", name, engine, "--db", dbs, "--option", option,
        ])
        .unwrap_err()
    };
    let e = add_with("lost", "ParamFile=asset:nope.toml");
    assert!(
        e.contains("no asset named 'nope.toml'") && e.contains("ParamFile"),
        "{e}"
    );
    let missing = "0".repeat(64);
    let e = add_with("lost", &format!("ParamFile=asset:{missing}"));
    assert!(e.contains(&missing), "{e}");
    let e = coordinator(&["asset", "add", "/no/such/file", "--db", dbs]).unwrap_err();
    assert!(e.contains("/no/such/file"), "{e}");
    // A bad parameter file is refused at `engine add` by the engine itself.
    let bad = r.files.0.join("bad.toml");
    std::fs::write(&bad, "chariot_value = 99999\n").unwrap();
    coordinator(&["asset", "add", bad.to_str().unwrap(), "--db", dbs]).unwrap();
    let e = add_with("broken", "ParamFile=asset:bad.toml");
    assert!(e.contains("bad ParamFile"), "{e}");

    let server =
        TestServer::start("127.0.0.1:0", &r.db.0, fast_config(Duration::from_secs(30))).await;
    let mut admin = admin(&server.url()).await;
    for (book, says) in [
        (missing.clone(), format!("no asset with sha256 {missing}")),
        (
            r.params_sha.clone(),
            format!("opening book asset:{}: opening line 1", r.params_sha),
        ),
    ] {
        let refused = admin
            .create_run(pb::CreateRunRequest {
                spec: Some(games(&book)),
                reuse_identical: false,
            })
            .await
            .expect_err("refused");
        assert!(refused.message().contains(&says), "{refused:?}");
    }
    let mut worker = worker_client(&server.url(), Some(WORKER_TOKEN));
    let unknown = worker
        .download_blob(pb::DownloadBlobRequest {
            sha256: missing.clone(),
        })
        .await
        .expect_err("unknown blob");
    assert_eq!(unknown.code(), tonic::Code::NotFound);
    assert!(unknown.message().contains(&missing), "{unknown:?}");
    server.stop().await;
}
