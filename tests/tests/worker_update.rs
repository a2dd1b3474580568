//! Worker versions and self-update, end to end. The build's `xq-worker` is
//! copied into a temporary folder (never run in place: it replaces itself)
//! as version 0.1.0, and a second copy with its version slot patched to
//! 0.2.0 is registered as the required worker release by an admin with the
//! real CLI. A 0.1.0 worker without `--auto-update` stops with a message
//! naming both versions; with it, it downloads the release, replaces its
//! own executable, restarts as 0.2.0 and plays a run. A release that does
//! not run leaves the old worker running, its failure visible in `report
//! --json`. Who may register and fetch releases, the web view's download
//! route, and the systemd unit (`systemd-analyze verify`) are checked too.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use tonic::Code;
use xq_proto::blob::sha256_hex;
use xq_proto::pb;
use xq_tests::accounts::{add_user, personal_token};
use xq_tests::cluster::{
    ADMIN_TOKEN, TempDb, TestServer, WORKER_TOKEN, create, fast_config, games_spec, raw_worker,
    registry_client, run_client, wait_for_end_or, worker_client,
};
use xq_tests::procs::{TempDir, Worker};
use xq_tests::{binary, web};
use xq_worker::version::TARGET;

/// `xq-coordinator ARGS…`: its output, whatever its exit (no stored login).
fn cli(args: &[&str]) -> Output {
    Command::new(binary("xq-coordinator"))
        .args(args)
        .env_remove("XQ_TOKEN")
        .env(
            "XQ_CONFIG_DIR",
            std::env::temp_dir().join("xq-worker-update-no-login"),
        )
        .output()
        .expect("run xq-coordinator")
}

/// A copy of the build's worker at `to`, executable, with its version slot
/// saying `version`: what `xq-worker make-test-release` writes.
fn worker_copy(to: &Path, version: &str) -> PathBuf {
    std::fs::create_dir_all(to.parent().expect("a folder")).expect("mkdir");
    let out = Command::new(binary("xq-worker"))
        .args(["make-test-release", "--version", version, "--out"])
        .arg(to)
        .output()
        .expect("run xq-worker make-test-release");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains(&format!("xq-worker {version} (from ")),
        "{said}"
    );
    to.to_owned()
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// What `exe --version` prints.
fn version_of(exe: &Path) -> String {
    let out = Command::new(exe).arg("--version").output().expect("run");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Users `root` (admin) and `dev` (developer) with personal tokens.
async fn accounts(db: &Path) -> (String, String) {
    let path = db.to_owned();
    tokio::task::spawn_blocking(move || {
        add_user(&path, "root", "admin", "root-update-words");
        add_user(&path, "dev", "developer", "dev-update-words");
        (personal_token(&path, "root"), personal_token(&path, "dev"))
    })
    .await
    .unwrap()
}

/// `report RUN --json` at `url`: its JSON.
fn report_json(url: &str, run: u64) -> serde_json::Value {
    let run = run.to_string();
    let out = cli(&[
        "report",
        &run,
        "--json",
        "--coordinator",
        url,
        "--token",
        ADMIN_TOKEN,
    ]);
    assert!(
        out.status.success(),
        "report: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("report --json is JSON")
}

/// The `worker_versions` entries of a report named `name`.
fn versions_of<'a>(report: &'a serde_json::Value, name: &str) -> Vec<&'a serde_json::Value> {
    report["worker_versions"]
        .as_array()
        .expect("worker_versions")
        .iter()
        .filter(|w| w["name"] == name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_too_old_worker_stops_or_replaces_itself_and_plays() {
    let dir = TempDir::new("worker-update");
    let db = TempDb::new("worker-update");
    let (root, dev) = accounts(&db.0).await;
    let server =
        TestServer::start_with_web("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30)))
            .await;
    let url = server.url();
    let old = worker_copy(&dir.join("old/xq-worker"), "0.1.0");
    let new = worker_copy(&dir.join("release/xq-worker"), "0.2.0");
    assert!(version_of(&old).starts_with("xq-worker 0.1.0\n"));
    assert!(version_of(&new).starts_with("xq-worker 0.2.0\n"));
    assert!(version_of(&new).contains(&format!("target {TARGET}")));
    let new_bytes = std::fs::read(&new).unwrap();
    let new_sha = sha256_hex(&new_bytes);
    let old_sha = sha256_hex(&std::fs::read(&old).unwrap());
    assert_ne!(new_sha, old_sha, "a patched copy is another binary");

    // Nobody but an admin registers a release.
    let release = |sha256: &str, size: u64| pb::AddWorkerReleaseRequest {
        release: Some(pb::WorkerRelease {
            version: "0.2.0".to_owned(),
            target: TARGET.to_owned(),
            sha256: sha256.to_owned(),
            size,
            required: true,
            created_unix_ms: 0,
        }),
    };
    for token in [WORKER_TOKEN, dev.as_str()] {
        let refused = registry_client(&url, Some(token))
            .add_worker_release(release(&new_sha, new_bytes.len() as u64))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    }
    let new_path = new.to_str().unwrap();
    let out = cli(&[
        "worker-release",
        "add",
        new_path,
        "--require",
        "--coordinator",
        &url,
        "--token",
        &dev,
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("only an admin"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Refused at the upload's header: not a byte of the binary is stored.
    let stored = registry_client(&url, Some(&root))
        .download_blob(pb::DownloadBlobRequest {
            sha256: new_sha.clone(),
        })
        .await;
    assert_eq!(
        stored.err().map(|e| e.code()),
        Some(Code::NotFound),
        "the developer's upload was stored"
    );
    let out = cli(&[
        "worker-release",
        "add",
        new_path,
        "--require",
        "--coordinator",
        &url,
        "--token",
        &root,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("xq-worker 0.2.0 target {TARGET} sha256 {new_sha}"))
            && stdout.contains("required"),
        "{stdout}"
    );

    // Any worker token reads the release; the web view serves its bytes.
    let info = worker_client(&url, Some(WORKER_TOKEN))
        .get_worker_release(pb::GetWorkerReleaseRequest {
            target: TARGET.to_owned(),
        })
        .await
        .expect("a worker token reads releases")
        .into_inner();
    let got = info.release.expect("the release");
    assert_eq!(
        (got.version.as_str(), got.sha256.as_str(), got.size),
        ("0.2.0", new_sha.as_str(), new_bytes.len() as u64)
    );
    assert_eq!(info.required_version, "0.2.0");
    let base = server.web_url();
    let (status, headers, body) =
        web::get_bytes(&format!("{base}/download/xq-worker/{TARGET}")).await;
    assert_eq!(status, 200);
    assert_eq!(headers["x-checksum-sha256"], new_sha.as_str());
    assert_eq!(headers["x-xq-worker-version"], "0.2.0");
    assert!(body == new_bytes, "the download route serves the release");
    let sums = web::get(&format!("{base}/download/xq-worker/{TARGET}.sha256")).await;
    assert_eq!(sums.body, format!("{new_sha}  xq-worker\n"));
    let page = web::get(&format!("{base}/download")).await;
    assert!(page.body.contains(&new_sha), "{}", page.body);
    let missing = web::get(&format!(
        "{base}/download/xq-worker/riscv64gc-unknown-linux-gnu"
    ))
    .await;
    assert_eq!(missing.status, 404);

    // Without --auto-update, too old ends the worker, naming both versions.
    let mut stale = Worker::start_exe(
        &old,
        &url,
        WORKER_TOKEN,
        "stale",
        &dir.join("stale.log"),
        &[],
        &[],
    );
    let exit = tokio::task::block_in_place(|| stale.exit_within(Duration::from_secs(120)))
        .expect("a too-old worker stops");
    assert!(!exit.success());
    let log = stale.log_text();
    assert!(
        log.contains("this worker is xq-worker 0.1.0; the coordinator requires 0.2.0 or newer"),
        "{log}"
    );
    assert_eq!(sha256_hex(&std::fs::read(&old).unwrap()), old_sha);

    // With it, the worker replaces its own executable and plays as 0.2.0.
    let mut admin = run_client(&url, Some(ADMIN_TOKEN));
    let run = create(&mut admin, games_spec(2, 2)).await;
    let cache = dir.join("cache");
    let worker = Worker::start_exe(
        &old,
        &url,
        WORKER_TOKEN,
        "volunteer",
        &dir.join("volunteer.log"),
        &["--auto-update"],
        &[("XDG_CACHE_HOME", cache.as_os_str())],
    );
    let end = wait_for_end_or(&mut admin, run, Duration::from_secs(300), || {
        format!("the worker's log:\n{}", worker.log_text())
    })
    .await;
    assert_eq!(end.state(), pb::RunState::Finished, "{}", worker.log_text());
    assert_eq!(end.totals.as_ref().map(|t| t.pairs), Some(2));
    assert_eq!(
        sha256_hex(&std::fs::read(&old).unwrap()),
        new_sha,
        "the worker replaced its own executable: {}",
        worker.log_text()
    );
    assert!(version_of(&old).starts_with("xq-worker 0.2.0\n"));
    let report = tokio::task::spawn_blocking({
        let url = url.clone();
        move || report_json(&url, run)
    })
    .await
    .unwrap();
    assert_eq!(report["required_worker_version"], "0.2.0");
    let states: Vec<(String, String)> = versions_of(&report, "volunteer")
        .iter()
        .map(|w| {
            (
                w["version"].as_str().unwrap().to_owned(),
                w["update_text"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    // The refused registration before the update and the one after it are
    // one worker: its machine id kept its row.
    assert_eq!(
        states,
        [("0.2.0".to_owned(), "updated from 0.1.0".to_owned())],
        "one row for the machine, updated"
    );
    let workers = web::get(&format!("{base}/workers")).await.body;
    assert!(
        workers.contains(&format!(
            "data-update=\"updated\">0.2.0<br><small>{TARGET}</small><br><small class=\"update\">updated from 0.1.0</small>"
        )),
        "{workers}"
    );
    let rows = |page: &str| page.matches("<td>volunteer</td>").count();
    assert_eq!(rows(&workers), 1, "{workers}");
    let id = registered_id(&worker.log_text());

    // Stopped and started again on the same state directory (a reboot, a
    // fleet machine's next start), it is still the same worker.
    drop(worker);
    let again = Worker::start_exe(
        &old,
        &url,
        WORKER_TOKEN,
        "volunteer",
        &dir.join("volunteer.log"),
        &["--auto-update"],
        &[("XDG_CACHE_HOME", cache.as_os_str())],
    );
    again.wait_for_log("registered", Duration::from_secs(60));
    assert_eq!(registered_id(&again.log_text()), id, "{}", again.log_text());
    let workers = web::get(&format!("{base}/workers")).await.body;
    assert_eq!(rows(&workers), 1, "{workers}");
    drop(again);
    server.stop().await;
}

/// The worker id of the last `registered` line of a worker's log.
fn registered_id(log: &str) -> u64 {
    log.lines()
        .rev()
        .filter(|l| l.contains("registered"))
        .find_map(|l| {
            let at = l.find("worker_id=")? + "worker_id=".len();
            let digits: String = l[at..].chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .unwrap_or_else(|| panic!("no registered worker_id in:\n{log}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_that_does_not_run_leaves_the_old_worker_running() {
    let dir = TempDir::new("worker-update-broken");
    let db = TempDb::new("worker-update-broken");
    let (root, _) = accounts(&db.0).await;
    let server =
        TestServer::start_with_web("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30)))
            .await;
    let url = server.url();
    let old = worker_copy(&dir.join("old/xq-worker"), "0.1.0");
    let old_sha = sha256_hex(&std::fs::read(&old).unwrap());
    // Bytes no machine runs, stated as 0.2.0 for this target: `add` cannot
    // run them, so it takes the version and target given.
    let broken = dir.join("broken");
    std::fs::write(&broken, b"\x7fELF but not an executable").unwrap();
    make_executable(&broken);
    let broken_path = broken.to_str().unwrap();
    let add = |extra: &[&str]| {
        let mut args = vec![
            "worker-release",
            "add",
            broken_path,
            "--require",
            "--coordinator",
            &url,
            "--token",
            &root,
        ];
        args.extend_from_slice(extra);
        cli(&args)
    };
    // A worker registered before the release is required learns it when it
    // next asks for work.
    let (mut early, early_id) = raw_worker(&url, "early").await;
    let unnamed = add(&[]);
    assert!(!unnamed.status.success());
    assert!(
        String::from_utf8_lossy(&unnamed.stderr).contains("give its --version and --target"),
        "{}",
        String::from_utf8_lossy(&unnamed.stderr)
    );
    let out = add(&["--version", "0.2.0", "--target", TARGET]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let refused = early
        .request_work(pb::RequestWorkRequest {
            worker_id: early_id,
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(
        refused
            .message()
            .contains("this worker is xq-worker 0.1.0; the coordinator requires 0.2.0 or newer"),
        "{refused:?}"
    );
    assert_eq!(
        refused.metadata().get("xq-required-version").unwrap(),
        "0.2.0"
    );
    assert_eq!(
        refused.metadata().get("xq-worker-id").unwrap(),
        early_id.to_string().as_str()
    );
    let malformed = worker_client(&url, Some(WORKER_TOKEN))
        .register(pb::RegisterRequest {
            name: "odd".to_owned(),
            threads: 1,
            version: "latest".to_owned(),
            bench_signature: 0,
            bench_nps: 0,
            machine: None,
            tools: Vec::new(),
            target: String::new(),
            updated_from: String::new(),
            machine_id: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(malformed.code(), Code::InvalidArgument);
    assert!(malformed.message().contains("\"latest\" is not a version"));

    let mut admin = run_client(&url, Some(ADMIN_TOKEN));
    let run = create(&mut admin, games_spec(2, 2)).await;
    let mut worker = Worker::start_exe(
        &old,
        &url,
        WORKER_TOKEN,
        "hopeful",
        &dir.join("hopeful.log"),
        &["--auto-update"],
        &[],
    );
    tokio::task::block_in_place(|| {
        worker.wait_for_log("the update failed", Duration::from_secs(120))
    });
    let report = tokio::task::spawn_blocking({
        let url = url.clone();
        move || report_json(&url, run)
    })
    .await
    .unwrap();
    let rows = versions_of(&report, "hopeful");
    assert_eq!(rows.len(), 1, "{report}");
    assert_eq!(rows[0]["version"], "0.1.0");
    assert_eq!(rows[0]["update"], "failed");
    assert_eq!(rows[0]["failed_to"], "0.2.0");
    let failure = rows[0]["failure"].as_str().unwrap();
    assert!(failure.contains("does not run"), "{failure}");
    assert!(
        tokio::task::block_in_place(|| worker.exit_within(Duration::from_millis(500))).is_none(),
        "the old worker keeps running: {}",
        worker.log_text()
    );
    assert_eq!(
        sha256_hex(&std::fs::read(&old).unwrap()),
        old_sha,
        "the old executable is untouched"
    );
    let workers = web::get(&format!("{}/workers", server.web_url()))
        .await
        .body;
    let row = &workers[workers.find(">hopeful<").expect("hopeful listed")..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(
        row.contains("data-update=\"failed\"")
            && row.contains("update to 0.2.0 failed: the new binary does not run"),
        "{row}"
    );
    let left: Vec<_> = std::fs::read_dir(old.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["xq-worker"], "no download is left beside it");
    let status = run_client(&url, Some(ADMIN_TOKEN))
        .get_run(pb::GetRunRequest {
            run_id: run,
            include_history: false,
        })
        .await
        .unwrap()
        .into_inner()
        .run
        .unwrap();
    assert_eq!(
        status.totals.map_or(0, |t| t.pairs),
        0,
        "a too-old worker gets no work"
    );
    drop(worker);
    server.stop().await;
}

/// The systemd unit passes `systemd-analyze verify` in a root of its own:
/// the unit where it is installed, the executable it starts (a copy of the
/// build's worker), and the system's targets it is ordered after.
#[test]
fn the_systemd_unit_verifies() {
    let analyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.exists());
    let Some(analyze) = analyze else {
        eprintln!("skipped: systemd-analyze is not installed (tests/run installs systemd)");
        return;
    };
    let unit_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../worker/xq-worker.service");
    let unit = std::fs::read_to_string(&unit_file).expect("worker/xq-worker.service");
    assert!(unit.contains("EnvironmentFile=/etc/xq-worker/worker.env"));
    assert!(unit.contains("Restart=on-failure"));
    assert!(unit.contains("User=xq-worker"));
    assert!(
        !unit.contains("--token"),
        "the token stays out of the command line"
    );
    let root = TempDir::new("systemd-root");
    let units = root.join("etc/systemd/system");
    std::fs::create_dir_all(&units).unwrap();
    std::fs::copy(&unit_file, units.join("xq-worker.service")).unwrap();
    let system = root.join("usr/lib/systemd/system");
    std::fs::create_dir_all(&system).unwrap();
    let host = ["/usr/lib/systemd/system", "/lib/systemd/system"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.is_dir())
        .expect("the system's units");
    for entry in std::fs::read_dir(host).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "target") {
            // `copy` follows the system's symlinks (aliases of targets).
            let _ = std::fs::copy(&path, system.join(path.file_name().unwrap()));
        }
    }
    worker_copy(&root.join("var/lib/xq-worker/xq-worker"), "0.1.0");
    let out = Command::new(analyze)
        .arg("verify")
        .arg(format!("--root={}", root.0.display()))
        .arg(units.join("xq-worker.service"))
        .output()
        .expect("run systemd-analyze");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.trim().is_empty(), "warnings: {stderr}");
}
