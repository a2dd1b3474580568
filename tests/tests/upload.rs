//! Engines and assets over the wire, end to end. A developer made with `user
//! add` uploads the built `xq-engine` and a 100 MiB asset from the real
//! `xq-coordinator` CLI, a process of its own, to a served coordinator (a
//! process too, whose peak memory is read from `/proc`); a separate
//! `xq-worker` downloads both and plays a run with them. The asset is random
//! bytes, so it is the value of `bookfiles`, an option `xq-engine` accepts
//! and ignores (UCCI's opening-book list): every worker must download it,
//! check its SHA-256 and hand its path to the engine before any game, and
//! the engine's bench signature is measured with it set, here and on the
//! worker, without the bytes changing the games.
//!
//! Then what must leave nothing stored: bytes that do not hash to the
//! announced SHA-256, a stream that ends early, one whose client goes away,
//! and the refusals: another user (an admin neither) registering a taken
//! name, a worker token, a token of no user, no token at all, an upload
//! whose header names what its user may not register. A blob nothing
//! references is deleted once the grace period has passed, never an
//! engine's that a run plays. And the web
//! view's upload form: a multipart POST by a signed-in user, with its CSRF
//! token, registers the engine as theirs.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use rand::{RngCore, SeedableRng};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;
use xq_coordinator::server::ServerConfig;
use xq_coordinator::service::registry::BlobGc;
use xq_proto::blob::{BLOB_CHUNK_BYTES, BlobHeader, UploadPurpose, sha256_hex};
use xq_proto::pb;
use xq_proto::pb::upload_blob_request::Part;
use xq_tests::accounts::{add_user, personal_token};
use xq_tests::cluster::{
    ADMIN_TOKEN, RegistryClient, TempDb, TestServer, WORKER_TOKEN, create, engine_settings,
    fast_config, registry_client, run_client, wait_for_end,
};
use xq_tests::procs::{Coordinator, TempDir, Worker};
use xq_tests::{binary, web};

/// The asset's size: 100 MiB.
const ASSET_BYTES: usize = 100 << 20;

/// How far the coordinator's peak resident memory may grow during the
/// upload of the 100 MiB asset.
const MAX_GROWTH_BYTES: u64 = 50 << 20;

/// `xq-coordinator ARGS…`: its output, whatever its exit.
fn cli(args: &[&str]) -> Output {
    Command::new(binary("xq-coordinator"))
        .args(args)
        .env_remove("XQ_TOKEN")
        .env(
            "XQ_CONFIG_DIR",
            std::env::temp_dir().join("xq-upload-no-login"),
        )
        .output()
        .expect("run xq-coordinator")
}

/// Its stdout; panics with its stderr if it failed.
fn ok(args: &[&str]) -> String {
    let out = cli(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Its stderr; panics if it succeeded.
fn refused(args: &[&str]) -> String {
    let out = cli(args);
    assert!(
        !out.status.success(),
        "{args:?} succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The `sha256 X` word of an `asset add`/`engine add` line.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == key).expect(key);
    words[at + 1]
}

/// The peak resident set size of process `pid` (`VmHWM`), in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .expect("VmHWM");
    kib << 10
}

/// Rows of `blobs` and `blob_chunks` in the database file.
fn stored_rows(db: &Path) -> (i64, i64) {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open the database");
    let count = |table: &str| {
        conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| {
            r.get::<_, i64>(0)
        })
        .expect("count")
    };
    (count("blobs"), count("blob_chunks"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_and_a_100_mib_asset_uploaded_from_the_cli_play_on_a_worker() {
    let dir = TempDir::new("upload");
    let db = dir.join("xq.db");
    let (url, pid, _coordinator, ana, worker_token, admin_token) = {
        let (dir_db, log) = (db.clone(), dir.join("coordinator.log"));
        tokio::task::spawn_blocking(move || {
            add_user(&dir_db, "ana", "developer", "ana-upload-words");
            let ana = personal_token(&dir_db, "ana");
            let worker = xq_tests::procs::token_add(&dir_db, "worker", "box");
            let admin = xq_tests::procs::token_add(&dir_db, "personal", "ops");
            let coordinator = Coordinator::start(&dir_db, 0, &[], &log);
            (
                coordinator.url(),
                coordinator.pid(),
                coordinator,
                ana,
                worker,
                admin,
            )
        })
        .await
        .unwrap()
    };

    let asset = dir.join("big.bin");
    let mut bytes = vec![0u8; ASSET_BYTES];
    rand_chacha::ChaCha8Rng::seed_from_u64(32).fill_bytes(&mut bytes);
    std::fs::write(&asset, &bytes).unwrap();
    let asset_sha = sha256_hex(&bytes);
    drop(bytes);
    let engine = dir.join("uploaded-engine");
    std::fs::copy(binary("xq-engine"), &engine).unwrap();

    // The asset, measured: the coordinator's peak memory before and after.
    let before = peak_rss(pid);
    let started = Instant::now();
    let line = {
        let (url, ana, asset) = (url.clone(), ana.clone(), asset.clone());
        tokio::task::spawn_blocking(move || {
            let asset = asset.to_str().unwrap().to_owned();
            ok(&[
                "asset",
                "add",
                &asset,
                "--name",
                "big.bin",
                "--coordinator",
                &url,
                "--token",
                &ana,
            ])
        })
        .await
        .unwrap()
    };
    let took = started.elapsed();
    let after = peak_rss(pid);
    let growth = after.saturating_sub(before);
    eprintln!(
        "upload of {} MiB took {:.1} s; the coordinator's peak RSS went from {:.1} MiB to {:.1} MiB (+{:.1} MiB)",
        ASSET_BYTES >> 20,
        took.as_secs_f64(),
        before as f64 / 1048576.0,
        after as f64 / 1048576.0,
        growth as f64 / 1048576.0
    );
    assert_eq!(field(&line, "sha256"), asset_sha, "{line}");
    assert_eq!(field(&line, "size"), ASSET_BYTES.to_string());
    assert!(
        growth < MAX_GROWTH_BYTES,
        "the coordinator's peak memory grew by {growth} bytes during a {ASSET_BYTES}-byte upload"
    );

    // The engine: benched here with the asset (downloaded back from the
    // coordinator), uploaded and registered as ana's.
    let line = {
        let (url, ana, engine) = (url.clone(), ana.clone(), engine.clone());
        tokio::task::spawn_blocking(move || {
            let engine = engine.to_str().unwrap().to_owned();
            ok(&[
                "engine",
                "add",
                "up-engine",
                &engine,
                "--option",
                "bookfiles=asset:big.bin",
                "--option",
                "Hash=2",
                "--coordinator",
                &url,
                "--token",
                &ana,
            ])
        })
        .await
        .unwrap()
    };
    let engine_sha = field(&line, "sha256").to_owned();
    assert_eq!(engine_sha, sha256_hex(&std::fs::read(&engine).unwrap()));
    let listed = {
        let (url, ana) = (url.clone(), ana.clone());
        tokio::task::spawn_blocking(move || {
            ok(&["engine", "list", "--coordinator", &url, "--token", &ana])
        })
        .await
        .unwrap()
    };
    assert!(
        listed.contains("up-engine") && listed.contains("owner ana"),
        "{listed}"
    );
    let registered = registry_client(&url, Some(&worker_token))
        .list_engines(pb::ListEnginesRequest {})
        .await
        .expect("a worker token lists engines")
        .into_inner()
        .engines;
    let up = registered[0].engine.as_ref().expect("the engine");
    assert_eq!(
        up.options.get("bookfiles"),
        Some(&format!("asset:{asset_sha}"))
    );
    assert!(up.signature.is_some_and(|s| s > 0), "{up:?}");

    // A run with them, played by a separate worker process.
    let mut admin = run_client(&url, Some(&admin_token));
    let run = create(
        &mut admin,
        pb::RunSpec {
            keep_games: Default::default(),
            name: "uploaded".to_owned(),
            priority: 0,
            batch_pairs: 2,
            settings: Some(engine_settings(300)),
            kind: Some(pb::run_spec::Kind::Games(pb::GamesSpec {
                dev_params: Default::default(),
                base_params: Default::default(),
                pairs: 2,
                engines: Some(pb::EngineChoice {
                    dev_engine: "up-engine".to_owned(),
                    ..Default::default()
                }),
            })),
            workers: None,
        },
    )
    .await;
    let cache_home = dir.join("cache");
    let state_home = dir.join("state");
    let worker = Worker::start_with(
        &url,
        &worker_token,
        "box",
        &dir.join("worker.log"),
        &[],
        &[
            ("XDG_CACHE_HOME", cache_home.as_os_str()),
            ("XDG_STATE_HOME", state_home.as_os_str()),
        ],
    );
    let end = wait_for_end(&mut admin, run, Duration::from_secs(300)).await;
    assert_eq!(end.state(), pb::RunState::Finished, "{}", worker.log_text());
    assert_eq!(end.totals.as_ref().map(|t| t.pairs), Some(2));
    let cached = |sha: &str| cache_home.join("xq-engines").join(sha);
    assert_eq!(
        std::fs::metadata(cached(&asset_sha)).map(|m| m.len()).ok(),
        Some(ASSET_BYTES as u64),
        "the worker downloaded the asset: {}",
        worker.log_text()
    );
    assert!(cached(&engine_sha).is_file(), "{}", worker.log_text());
    drop(worker);

    let logged = {
        let db = db.clone();
        tokio::task::spawn_blocking(move || {
            let db = db.to_str().unwrap().to_owned();
            ok(&["events", "--db", &db, "--user", "ana"])
        })
        .await
        .unwrap()
    };
    assert!(
        logged.contains("asset 'big.bin'") && logged.contains("engine 'up-engine'"),
        "{logged}"
    );
}

/// The first message of an upload, of an asset `upload.bin`.
fn header(sha256: &str, size: u64) -> pb::UploadBlobRequest {
    header_for(sha256, size, UploadPurpose::Asset("upload.bin".to_owned()))
}

/// The first message of an upload to become `purpose`.
fn header_for(sha256: &str, size: u64, purpose: UploadPurpose) -> pb::UploadBlobRequest {
    pb::UploadBlobRequest {
        part: Some(Part::Header(
            BlobHeader {
                sha256: sha256.to_owned(),
                size,
                purpose,
            }
            .into(),
        )),
    }
}

fn data(bytes: &[u8]) -> pb::UploadBlobRequest {
    pb::UploadBlobRequest {
        part: Some(Part::Data(bytes.to_vec())),
    }
}

/// An upload announcing `sha256` and `size` that sends `bytes` in chunks.
async fn upload(
    client: &mut RegistryClient,
    sha256: &str,
    size: u64,
    bytes: &[u8],
) -> Result<pb::UploadBlobResponse, tonic::Status> {
    let mut messages = vec![header(sha256, size)];
    messages.extend(bytes.chunks(BLOB_CHUNK_BYTES).map(data));
    client
        .upload_blob(tokio_stream::iter(messages))
        .await
        .map(tonic::Response::into_inner)
}

/// Waits until the database holds `rows` (blobs, chunks).
async fn wait_for_rows(db: &Path, rows: (i64, i64), what: &str) {
    let end = Instant::now() + Duration::from_secs(20);
    while stored_rows(db) != rows {
        assert!(
            Instant::now() < end,
            "{what}: the database holds {:?}, expected {rows:?}",
            stored_rows(db)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lying_broken_and_unauthorized_uploads_leave_nothing() {
    let db = TempDb::new("upload-refusals");
    let (ana, bo, root) = {
        let path = db.0.clone();
        tokio::task::spawn_blocking(move || {
            add_user(&path, "ana", "developer", "ana-upload-words");
            add_user(&path, "bo", "developer", "bo-upload-words");
            add_user(&path, "root", "admin", "root-upload-words");
            (
                personal_token(&path, "ana"),
                personal_token(&path, "bo"),
                personal_token(&path, "root"),
            )
        })
        .await
        .unwrap()
    };
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
    let url = server.url();
    let mut client = registry_client(&url, Some(&ana));
    let bytes: Vec<u8> = (0..3 * BLOB_CHUNK_BYTES + 5)
        .map(|i| (i * 31 % 256) as u8)
        .collect();
    let (sha, size) = (sha256_hex(&bytes), bytes.len() as u64);

    // Bytes that are not the announced ones: refused once they are all in,
    // the chunks written meanwhile deleted.
    let other = sha256_hex(b"other bytes");
    let e = upload(&mut client, &other, size, &bytes).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("not to the announced"), "{e:?}");
    assert_eq!(stored_rows(&db.0), (0, 0));
    let assets = client
        .list_assets(pb::ListAssetsRequest {})
        .await
        .unwrap()
        .into_inner()
        .assets;
    assert!(assets.is_empty(), "{assets:?}");
    // More bytes than announced, and fewer.
    let e = upload(&mut client, &sha, size - 1, &bytes)
        .await
        .unwrap_err();
    assert!(e.message().contains("more than the"), "{e:?}");
    let e = upload(&mut client, &sha, size, &bytes[..2 * BLOB_CHUNK_BYTES])
        .await
        .unwrap_err();
    assert!(e.message().contains("ended after"), "{e:?}");
    assert_eq!(stored_rows(&db.0), (0, 0));

    // A client that goes away mid-way.
    let (tx, rx) = mpsc::channel(4);
    let mut cut = client.clone();
    let call = tokio::spawn(async move { cut.upload_blob(ReceiverStream::new(rx)).await });
    tx.send(header(&sha, size)).await.unwrap();
    tx.send(data(&bytes[..BLOB_CHUNK_BYTES])).await.unwrap();
    tx.send(data(&bytes[BLOB_CHUNK_BYTES..2 * BLOB_CHUNK_BYTES]))
        .await
        .unwrap();
    wait_for_rows(&db.0, (1, 2), "two chunks of the cut upload").await;
    // Meanwhile another upload of the same bytes is refused, retryably.
    let e = upload(&mut client, &sha, size, &bytes).await.unwrap_err();
    assert_eq!(e.code(), Code::Aborted, "{e:?}");
    call.abort();
    wait_for_rows(&db.0, (0, 0), "the cut upload").await;

    // The whole upload, then the same announced again: answered at once,
    // before any byte is sent.
    let stored = upload(&mut client, &sha, size, &bytes).await.unwrap();
    assert!(!stored.already_stored);
    assert_eq!(stored_rows(&db.0), (1, 4));
    let (tx, rx) = mpsc::channel(1);
    tx.send(header(&sha, size)).await.unwrap();
    let again = tokio::time::timeout(
        Duration::from_secs(10),
        client.upload_blob(ReceiverStream::new(rx)),
    )
    .await
    .expect("answered without the data")
    .unwrap()
    .into_inner();
    assert!(again.already_stored, "{again:?}");
    drop(tx);

    // Registered by ana, the name is hers: nobody else registers it, an
    // admin neither, with the same bytes or others.
    let file = std::env::temp_dir().join(format!("xq-upload-refusals-{}", std::process::id()));
    std::fs::write(&file, &bytes).unwrap();
    let other_file = std::env::temp_dir().join(format!("xq-upload-other-{}", std::process::id()));
    std::fs::write(&other_file, b"bo's bytes").unwrap();
    let (url2, file2, other2) = (url.clone(), file.clone(), other_file.clone());
    let (ana2, bo2, root2) = (ana.clone(), bo.clone(), root.clone());
    tokio::task::spawn_blocking(move || {
        let (file, other) = (file2.to_str().unwrap(), other2.to_str().unwrap());
        let line = ok(&[
            "asset",
            "add",
            file,
            "--name",
            "net.bin",
            "--coordinator",
            &url2,
            "--token",
            &ana2,
        ]);
        assert!(line.starts_with("net.bin sha256"), "{line}");
        ok(&[
            "asset",
            "add",
            file,
            "--name",
            "net.bin",
            "--coordinator",
            &url2,
            "--token",
            &ana2,
        ]);
        for (token, path) in [(&bo2, other), (&bo2, file), (&root2, other), (&root2, file)] {
            let e = refused(&[
                "asset",
                "add",
                path,
                "--name",
                "net.bin",
                "--coordinator",
                &url2,
                "--token",
                token,
            ]);
            assert!(e.contains("registered by ana"), "{e}");
        }
        let engine = binary("xq-engine");
        let engine = engine.to_str().unwrap();
        ok(&[
            "engine",
            "add",
            "anas",
            engine,
            "--coordinator",
            &url2,
            "--token",
            &ana2,
        ]);
        for token in [&bo2, &root2] {
            let e = refused(&[
                "engine",
                "add",
                "anas",
                engine,
                "--coordinator",
                &url2,
                "--token",
                token,
            ]);
            assert!(e.contains("registered by ana"), "{e}");
        }
        let listed = ok(&["asset", "list", "--coordinator", &url2, "--token", &bo2]);
        assert!(
            listed.contains("net.bin") && listed.contains("owner ana"),
            "{listed}"
        );
    })
    .await
    .unwrap();
    // The coordinator's own check, without the CLI's early one.
    let mut as_bo = registry_client(&url, Some(&bo));
    let e = as_bo
        .add_asset(pb::AddAssetRequest {
            name: "net.bin".to_owned(),
            sha256: sha.clone(),
            size,
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("registered by ana"), "{e:?}");
    let anas = as_bo
        .list_engines(pb::ListEnginesRequest {})
        .await
        .unwrap()
        .into_inner()
        .engines
        .into_iter()
        .find(|e| e.engine.as_ref().is_some_and(|e| e.name == "anas"))
        .expect("ana's engine");
    assert_eq!(anas.owner, "ana");
    let e = as_bo
        .add_engine(pb::AddEngineRequest {
            engine: anas.engine,
            spin_options: Vec::new(),
            variants: None,
        })
        .await
        .unwrap_err();
    assert!(e.message().contains("registered by ana"), "{e:?}");
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(&other_file);

    // Who may upload at all.
    let small = b"a small blob";
    let (small_sha, small_size) = (sha256_hex(small), small.len() as u64);
    let mut worker = registry_client(&url, Some(WORKER_TOKEN));
    let e = upload(&mut worker, &small_sha, small_size, small)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    let e = worker
        .add_asset(pb::AddAssetRequest {
            name: "w".to_owned(),
            sha256: sha.clone(),
            size,
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    let mut userless = registry_client(&url, Some(ADMIN_TOKEN));
    let e = upload(&mut userless, &small_sha, small_size, small)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    assert!(e.message().contains("belongs to no user"), "{e:?}");
    let mut nobody = registry_client(&url, None);
    let e = upload(&mut nobody, &small_sha, small_size, small)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated, "{e:?}");
    let e = nobody
        .list_assets(pb::ListAssetsRequest {})
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated, "{e:?}");
    // An upload says what it is for, and what its user may not register is
    // refused from its header: not a byte of it is stored.
    let rows = stored_rows(&db.0);
    let send = async |client: &mut RegistryClient, purpose: Option<UploadPurpose>| {
        let first = match purpose {
            Some(purpose) => header_for(&small_sha, small_size, purpose),
            None => pb::UploadBlobRequest {
                part: Some(Part::Header(pb::UploadHeader {
                    sha256: small_sha.clone(),
                    size: small_size,
                    purpose: None,
                })),
            },
        };
        client
            .upload_blob(tokio_stream::iter([first, data(small)]))
            .await
            .unwrap_err()
    };
    let e = send(&mut client, Some(UploadPurpose::WorkerRelease)).await;
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    assert!(e.message().contains("only an admin"), "{e:?}");
    let e = send(&mut as_bo, Some(UploadPurpose::Engine("anas".to_owned()))).await;
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("registered by ana"), "{e:?}");
    let e = send(&mut as_bo, Some(UploadPurpose::Asset("net.bin".to_owned()))).await;
    assert!(e.message().contains("registered by ana"), "{e:?}");
    let e = send(&mut as_bo, None).await;
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("header.purpose"), "{e:?}");
    assert_eq!(stored_rows(&db.0), rows, "nothing of the refused uploads");

    let (blobs, _) = stored_rows(&db.0);
    assert_eq!(blobs, 2, "the asset and the engine; nothing of the refused");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blobs_nothing_references_are_deleted_after_the_grace_period() {
    let db = TempDb::new("upload-gc");
    let ana = {
        let path = db.0.clone();
        tokio::task::spawn_blocking(move || {
            add_user(&path, "ana", "developer", "ana-upload-words");
            personal_token(&path, "ana")
        })
        .await
        .unwrap()
    };
    let grace = Duration::from_secs(3);
    let config = ServerConfig {
        blob_gc: Some(BlobGc {
            grace,
            every: Duration::from_millis(200),
        }),
        ..fast_config(Duration::from_secs(30))
    };
    let server = TestServer::start("127.0.0.1:0", &db.0, config).await;
    let url = server.url();
    let mut client = registry_client(&url, Some(&ana));
    let put = async |client: &mut RegistryClient, bytes: &[u8], purpose: UploadPurpose| {
        let mut messages = vec![header_for(&sha256_hex(bytes), bytes.len() as u64, purpose)];
        messages.extend(bytes.chunks(BLOB_CHUNK_BYTES).map(data));
        client
            .upload_blob(tokio_stream::iter(messages))
            .await
            .expect("uploaded");
        sha256_hex(bytes)
    };
    // An engine that a run then plays, and a blob nobody registers (a client
    // that stopped between its upload and its registration).
    let engine_bytes = std::fs::read(binary("xq-engine")).unwrap();
    let engine_sha = put(
        &mut client,
        &engine_bytes,
        UploadPurpose::Engine("kept".to_owned()),
    )
    .await;
    let orphan = put(
        &mut client,
        b"never registered",
        UploadPurpose::Asset("lost".to_owned()),
    )
    .await;
    let uploaded = Instant::now();
    client
        .add_engine(pb::AddEngineRequest {
            engine: Some(pb::EngineRef {
                name: "kept".to_owned(),
                sha256: engine_sha.clone(),
                size: engine_bytes.len() as u64,
                protocol: pb::EngineProtocol::Uci.into(),
                ..Default::default()
            }),
            spin_options: Vec::new(),
            variants: None,
        })
        .await
        .expect("the engine registers");
    let mut runs = run_client(&url, Some(&ana));
    let spec = pb::RunSpec {
        name: "keeps its engine".to_owned(),
        batch_pairs: 1,
        settings: Some(engine_settings(50)),
        kind: Some(pb::run_spec::Kind::Games(pb::GamesSpec {
            pairs: 1,
            engines: Some(pb::EngineChoice {
                dev_engine: "kept".to_owned(),
                ..Default::default()
            }),
            ..Default::default()
        })),
        ..Default::default()
    };
    create(&mut runs, spec).await;
    let stored = |sha: String| {
        let mut reader = registry_client(&url, Some(WORKER_TOKEN));
        async move {
            match reader
                .download_blob(pb::DownloadBlobRequest { sha256: sha })
                .await
            {
                Ok(_) => true,
                Err(e) if e.code() == Code::NotFound => false,
                Err(e) => panic!("{e:?}"),
            }
        }
    };
    while stored(orphan.clone()).await {
        assert!(
            uploaded.elapsed() < grace + Duration::from_secs(20),
            "the unreferenced blob is still stored"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        uploaded.elapsed() + Duration::from_millis(300) >= grace,
        "deleted after {:?}, within the grace period",
        uploaded.elapsed()
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(stored(engine_sha).await, "the engine's executable is kept");
    assert_eq!(stored_rows(&db.0).0, 1, "only the engine's executable");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_uploaded_from_the_web_form_belongs_to_its_user() {
    let db = TempDb::new("upload-web");
    let path = db.0.clone();
    tokio::task::spawn_blocking(move || {
        add_user(&path, "ana", "developer", "ana-upload-words");
        add_user(&path, "bo", "developer", "bo-upload-words");
    })
    .await
    .unwrap();
    let server =
        TestServer::start_with_web("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30)))
            .await;
    let base = server.web_url();
    let sign_in = web::get(&format!("{base}/sign-in")).await;
    let csrf = web::set_cookie(&sign_in, "xq_csrf");
    let anonymous = format!("xq_csrf={csrf}");
    let session = async |name: &str, password: &str| {
        let answer = web::post_form(
            &format!("{base}/sign-in"),
            &[("cookie", &anonymous)],
            &format!("csrf={csrf}&name={name}&password={password}"),
        )
        .await;
        assert_eq!(answer.status.as_u16(), 303, "{}", answer.body);
        let cookie = format!("xq_session={}", web::set_cookie(&answer, "xq_session"));
        let page = web::request(
            http::Method::GET,
            &format!("{base}/engines"),
            &[("cookie", &cookie)],
            "",
        )
        .await;
        assert!(page.body.contains("id=\"upload-form\""), "{}", page.body);
        (cookie, web::form_csrf(&page.body))
    };
    let (ana, ana_csrf) = session("ana", "ana-upload-words").await;
    // Bytes that stand for an executable: the coordinator never runs them.
    let executable: Vec<u8> = (0..2 * BLOB_CHUNK_BYTES + 100)
        .map(|i| (i % 241) as u8)
        .collect();
    let url = format!("{base}/engines/upload");
    let form = |csrf: &str, name: &str| {
        vec![
            ("csrf", csrf.to_owned()),
            ("name", name.to_owned()),
            ("protocol", "uci".to_owned()),
            ("signature", "123456".to_owned()),
            ("coords", "1-10".to_owned()),
            ("options", "Hash=16\nThreads=1".to_owned()),
        ]
    };
    let post = async |cookie: &str, fields: Vec<(&str, String)>, bytes: &[u8]| {
        let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        web::post_multipart(
            &url,
            &[("cookie", cookie)],
            &fields,
            ("file", "engine", bytes),
        )
        .await
    };

    // Without the form's CSRF token, or not signed in: refused, nothing stored.
    // A small file: the server answers a refusal without reading the body, and a
    // client still writing megabytes then sees a broken pipe, not the answer.
    let small = &executable[..100];
    let refused = post(&ana, form("xqc_forged", "web-engine"), small).await;
    assert_eq!(refused.status.as_u16(), 403, "{}", refused.body);
    let anonymous_post = post(&anonymous, form(&csrf, "web-engine"), small).await;
    assert_eq!(
        anonymous_post.status.as_u16(),
        401,
        "{}",
        anonymous_post.body
    );
    assert_eq!(stored_rows(&db.0), (0, 0));

    let done = post(&ana, form(&ana_csrf, "web-engine"), &executable).await;
    assert_eq!(done.status.as_u16(), 303, "{}", done.body);
    let page = web::get(&format!("{base}/engines")).await.body;
    assert!(
        page.contains("web-engine") && page.contains(&sha256_hex(&executable)),
        "{page}"
    );
    assert!(
        page.contains("data-owner=\"ana\">ana</td>"),
        "the owner is shown: {page}"
    );
    assert_eq!(stored_rows(&db.0), (1, 3));
    let listed = registry_client(&server.url(), Some(WORKER_TOKEN))
        .list_engines(pb::ListEnginesRequest {})
        .await
        .unwrap()
        .into_inner()
        .engines;
    let engine = listed[0].engine.clone().expect("the engine");
    assert_eq!(
        (
            listed[0].owner.as_str(),
            engine.signature,
            engine.size,
            engine.options.len()
        ),
        ("ana", Some(123456), executable.len() as u64, 2)
    );

    // The name is ana's: bo's upload under it is refused on the page.
    let (bo, bo_csrf) = session("bo", "bo-upload-words").await;
    let taken = post(&bo, form(&bo_csrf, "web-engine"), b"bo's engine").await;
    assert_eq!(taken.status.as_u16(), 400, "{}", taken.body);
    assert!(
        taken.body.contains("id=\"refusal\"") && taken.body.contains("registered by ana"),
        "{}",
        taken.body
    );
    assert_eq!(stored_rows(&db.0), (1, 3), "bo's bytes were never stored");

    // Only this route takes a large body.
    let big = vec![b'a'; 3 << 20];
    let elsewhere = web::request_bytes(
        http::Method::POST,
        &format!("{base}/users"),
        &[
            ("cookie", &ana),
            ("content-type", "application/x-www-form-urlencoded"),
        ],
        big,
    )
    .await;
    assert!(
        elsewhere.status.is_client_error() && elsewhere.body.contains("length limit exceeded"),
        "{} {}",
        elsewhere.status,
        elsewhere.body
    );
    server.stop().await;
}

/// Builds for instruction sets join a name over the wire only for its
/// owner, one per ARCH value, and the listing shows each with its owner.
#[test]
fn builds_join_an_owned_name_only_for_its_owner_one_per_arch() {
    let dir = TempDir::new("upload-builds");
    let db = dir.join("xq.db");
    add_user(&db, "ana", "developer", "ana-upload-words");
    add_user(&db, "bo", "developer", "bo-upload-words");
    let (ana, bo) = (personal_token(&db, "ana"), personal_token(&db, "bo"));
    let coordinator = Coordinator::start(&db, 0, &[], &dir.join("coordinator.log"));
    let url = coordinator.url();
    let (generic, tagged) = (dir.join("generic"), dir.join("tagged"));
    std::fs::copy(binary("xq-engine"), &generic).unwrap();
    std::fs::copy(binary("xq-engine"), &tagged).unwrap();
    std::fs::write(
        &tagged,
        [std::fs::read(&tagged).unwrap(), b"\0".to_vec()].concat(),
    )
    .unwrap();
    let add = |path: &Path, token: &str, arch: Option<&str>| -> Output {
        let mut args = vec![
            "engine",
            "add",
            "pika",
            path.to_str().unwrap(),
            "--no-bench",
        ];
        if let Some(a) = arch {
            args.extend(["--arch", a]);
        }
        args.extend(["--coordinator", &url, "--token", token]);
        cli(&args)
    };
    let text = |o: &Output| String::from_utf8_lossy(&o.stdout).into_owned();
    let error = |o: Output| {
        assert!(!o.status.success(), "{}", text(&o));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let first = add(&generic, &ana, None);
    assert!(first.status.success(), "{first:?}");
    let build = add(&tagged, &ana, Some("x86-64"));
    assert!(text(&build).contains("arch x86-64"), "{build:?}");
    let theirs = error(add(&tagged, &bo, Some("x86-64-avx2")));
    assert!(
        theirs.contains("registered by ana") && theirs.contains("only their owner"),
        "{theirs}"
    );
    // Refused before anything is benched: an executable that marks each
    // run, a build this machine runs, and no --no-bench.
    let (spy, marker) = (dir.join("spy"), dir.join("spy-ran"));
    std::fs::write(&spy, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    std::fs::set_permissions(&spy, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let spied = error(cli(&[
        "engine",
        "add",
        "pika",
        spy.to_str().unwrap(),
        "--arch",
        "x86-64",
        "--coordinator",
        &url,
        "--token",
        &bo,
    ]));
    assert!(spied.contains("registered by ana"), "{spied}");
    assert!(
        !marker.exists(),
        "the engine was run before the name was checked"
    );
    let again = error(add(&generic, &ana, Some("x86-64")));
    assert!(
        again.contains("has an x86-64 executable already"),
        "{again}"
    );
    let listed = ok(&["engine", "list", "--coordinator", &url, "--token", &bo]);
    let rows: Vec<(&str, &str)> = listed
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[1], *f.last().unwrap())
        })
        .collect();
    assert_eq!(
        rows,
        [("untagged", "owner ana"), ("x86-64", "owner ana")],
        "{listed}"
    );
}
