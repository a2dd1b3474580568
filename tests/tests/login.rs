//! The CLI speaks as a user, through the real binary and server: two
//! developers made with `user add --password-stdin` sign in with `login`
//! (each with their own configuration directory, `XQ_CONFIG_DIR`), which
//! stores a personal token in a file of mode 0600; `games`, `status` and
//! `stop` then work without `--coordinator` or `--token`, but a personal
//! token may not stop or approve another developer's run, nor act as a
//! worker. A developer makes a worker token for their own machine, lists
//! and revokes their own tokens (not another's), and a revoked or
//! logged-out token is refused at the very next call. Wrong passwords are
//! UNAUTHENTICATED, one answer for an unknown user, and repeated ones are
//! RESOURCE_EXHAUSTED. Every token change is an event by its user, and the
//! database file holds no password or token in clear. `asset add` and
//! `asset list` without `--db` go to the stored login's coordinator.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use tonic::Code;
use xq_proto::pb;
use xq_proto::pb::account_service_client::AccountServiceClient;
use xq_tests::accounts::{add_user, contains, database_bytes};
use xq_tests::cluster::{
    TempDb, TestServer, fast_config, register_request, run_client, worker_client,
};
use xq_tests::{binary, coordinator_cli};

const ANA_PASSWORD: &str = "ana-login-words";
const BO_PASSWORD: &str = "bo-login-words";

/// How the CLI prints a PERMISSION_DENIED status (tonic's description).
const DENIED: &str = "does not have permission";
/// ... and an UNAUTHENTICATED one.
const UNAUTHENTICATED: &str = "does not have valid authentication credentials";

/// `xq-coordinator ARGS…` with the configuration directory `config` and
/// `stdin` as its standard input.
fn cli(config: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(binary("xq-coordinator"))
        .args(args)
        .env("XQ_CONFIG_DIR", config)
        .env_remove("XQ_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run xq-coordinator");
    let mut input = child.stdin.take().expect("stdin");
    let _ = writeln!(input, "{stdin}");
    drop(input);
    child.wait_with_output().expect("xq-coordinator ends")
}

/// Its stdout; panics with its stderr if it failed.
fn ok(config: &Path, args: &[&str]) -> String {
    let out = cli(config, args, "");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Its stderr; panics if it succeeded.
fn refused(config: &Path, args: &[&str], stdin: &str) -> String {
    let out = cli(config, args, stdin);
    assert!(
        !out.status.success(),
        "{args:?} succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A fresh configuration directory (not made yet: `login` makes it).
fn config_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xq-login-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The `key = "value"` of the credentials file in `config`.
fn stored(config: &Path, key: &str) -> String {
    let text = std::fs::read_to_string(config.join("credentials.toml")).expect("credentials");
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = \"")))
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or_else(|| panic!("no {key} in {text}"))
        .to_owned()
}

fn login(config: &Path, url: &str, user: &str, password: &str) {
    let args = [
        "login",
        "--coordinator",
        url,
        "--user",
        user,
        "--password-stdin",
    ];
    let out = cli(config, &args, password);
    assert!(
        out.status.success(),
        "login: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn as_str(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_developer_signs_in_and_speaks_through_the_stored_token() {
    let db = TempDb::new("login");
    let path = db.0.clone();
    tokio::task::spawn_blocking(move || {
        add_user(&path, "ana", "developer", ANA_PASSWORD);
        add_user(&path, "bo", "developer", BO_PASSWORD);
    })
    .await
    .unwrap();
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(10))).await;
    let url = server.url();
    let (ana_dir, bo_dir) = (config_dir("ana"), config_dir("bo"));

    let (ana_token, bo_token, ana_box, bo_run) = {
        let (url, ana_dir, bo_dir) = (url.clone(), ana_dir.clone(), bo_dir.clone());
        tokio::task::spawn_blocking(move || {
            login(&ana_dir, &url, "ana", ANA_PASSWORD);
            login(&bo_dir, &url, "bo", BO_PASSWORD);
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode(&ana_dir.join("credentials.toml")), 0o600);
                assert_eq!(mode(&ana_dir), 0o700);
            }
            assert_eq!(stored(&ana_dir, "coordinator"), url);
            // Neither --coordinator nor --token: the stored login speaks.
            let games = ["games", "--pairs", "1000", "--nodes", "100"];
            let ana_run = ok(&ana_dir, &games).trim().to_owned();
            let bo_run = ok(&bo_dir, &games).trim().to_owned();
            let listed = ok(&ana_dir, &["status"]);
            assert!(
                listed.contains("by ana") && listed.contains("by bo"),
                "{listed}"
            );
            // A developer's personal token stops only their own run and
            // approves nothing.
            let err = refused(&ana_dir, &["stop", &bo_run], "");
            assert!(err.contains(DENIED), "{err}");
            assert!(err.contains("only their own runs"), "{err}");
            // The coordinator's words lead; tonic's only follow.
            assert!(
                err.find("only their own runs") < err.find(DENIED) && !err.contains("code:"),
                "{err}"
            );
            let err = refused(&ana_dir, &["approve", &bo_run], "");
            assert!(
                err.contains(DENIED) && err.contains("a developer may not"),
                "{err}"
            );
            ok(&ana_dir, &["stop", &ana_run]);
            // The registry too: without --db, the stored login's coordinator,
            // the asset hers.
            let book = ana_dir.join("ana-book.epd");
            std::fs::write(&book, "# nothing yet\n").unwrap();
            let added = ok(&ana_dir, &["asset", "add", book.to_str().unwrap()]);
            assert!(added.starts_with("ana-book.epd sha256"), "{added}");
            let assets = ok(&bo_dir, &["asset", "list"]);
            assert!(
                assets.contains("ana-book.epd") && assets.contains("owner ana"),
                "{assets}"
            );
            // An explicit --token wins over the stored one.
            let err = refused(&ana_dir, &["status", "--token", "xqt_not_a_token"], "");
            assert!(err.contains("unknown or revoked token"), "{err}");
            // Her own worker token, for her machine; her tokens only.
            let remote = ["--coordinator", url.as_str()];
            let mut add = vec!["token", "add", "--role", "worker", "ana-box"];
            add.extend(remote);
            let ana_box = ok(&ana_dir, &add).trim().to_owned();
            assert!(ana_box.starts_with("xqt_"), "{ana_box}");
            let mut list = vec!["token", "list"];
            list.extend(remote);
            let mine = ok(&ana_dir, &list);
            let bo_login = stored(&bo_dir, "token_name");
            assert!(
                mine.contains("ana-box") && mine.contains("ana-login-"),
                "{mine}"
            );
            assert!(!mine.contains(&bo_login), "{mine}");
            let mut all = list.clone();
            all.push("--all");
            let err = refused(&ana_dir, &all, "");
            assert!(err.contains("only their own tokens"), "{err}");
            let mut theirs = vec!["token", "revoke", bo_login.as_str()];
            theirs.extend(remote);
            let err = refused(&ana_dir, &theirs, "");
            assert!(
                err.contains(DENIED) && err.contains("is not yours"),
                "{err}"
            );
            (
                stored(&ana_dir, "token"),
                stored(&bo_dir, "token"),
                ana_box,
                bo_run,
            )
        })
        .await
        .unwrap()
    };

    // A personal token never acts as a worker; the worker token does.
    let register = || register_request("ana-box");
    let err = worker_client(&url, Some(&ana_token))
        .register(register())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err}");
    worker_client(&url, Some(&ana_box))
        .register(register())
        .await
        .unwrap();

    // Revoked (remotely) or logged out: refused at the very next call.
    {
        let (url, ana_dir, bo_dir) = (url.clone(), ana_dir.clone(), bo_dir.clone());
        tokio::task::spawn_blocking(move || {
            let name = stored(&ana_dir, "token_name");
            ok(&ana_dir, &["token", "revoke", &name, "--coordinator", &url]);
            let err = refused(&ana_dir, &["status"], "");
            assert!(
                err.contains(UNAUTHENTICATED) && err.contains("unknown or revoked token"),
                "{err}"
            );
            ok(&bo_dir, &["logout"]);
            assert!(!bo_dir.join("credentials.toml").exists());
            let err = refused(&bo_dir, &["logout"], "");
            assert!(err.contains("not signed in"), "{err}");
        })
        .await
        .unwrap();
    }
    let err = run_client(&url, Some(&bo_token))
        .get_run(pb::GetRunRequest {
            run_id: bo_run.parse().unwrap(),
            include_history: false,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unauthenticated, "{err}");

    // Wrong passwords: one answer for an unknown user, then limited.
    {
        let (url, dir) = (url.clone(), config_dir("wrong"));
        tokio::task::spawn_blocking(move || {
            let args = |user: &'static str| -> Vec<String> {
                [
                    "login",
                    "--coordinator",
                    url.as_str(),
                    "--user",
                    user,
                    "--password-stdin",
                ]
                .map(str::to_owned)
                .to_vec()
            };
            let wrong = refused(&dir, &as_str(&args("ana")), "not her password");
            assert!(
                wrong.contains(UNAUTHENTICATED) && wrong.contains("wrong user name or password"),
                "{wrong}"
            );
            let unknown = refused(&dir, &as_str(&args("zed")), "any password");
            assert!(unknown.contains("wrong user name or password"), "{unknown}");
            assert!(!dir.join("credentials.toml").exists());
        })
        .await
        .unwrap();
    }
    let mut accounts = AccountServiceClient::connect(url.clone()).await.unwrap();
    let mut codes = Vec::new();
    for _ in 0..8 {
        let err = accounts
            .login(pb::LoginRequest {
                user: "bo".to_owned(),
                password: "guess".to_owned(),
                token_name: String::new(),
            })
            .await
            .unwrap_err();
        assert!(err.message().len() <= 1024, "{err}");
        codes.push(err.code());
        if err.code() == Code::ResourceExhausted {
            break;
        }
    }
    assert_eq!(codes[0], Code::Unauthenticated, "{codes:?}");
    assert_eq!(codes.last(), Some(&Code::ResourceExhausted), "{codes:?}");
    let err = accounts
        .login(pb::LoginRequest {
            user: "bo".to_owned(),
            password: BO_PASSWORD.to_owned(),
            token_name: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        Code::ResourceExhausted,
        "locked even for the right password: {err}"
    );
    server.stop().await;

    // Every token change is logged by its user, and nothing is in clear.
    let path = db.0.clone();
    let log = tokio::task::spawn_blocking(move || {
        let db = path.to_str().unwrap().to_owned();
        coordinator_cli(["events", "--kind", "token", "--db", db.as_str()])
    })
    .await
    .unwrap();
    let who_what: Vec<(&str, &str)> = log
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[2], w[5])
        })
        .collect();
    assert_eq!(
        who_what,
        [
            ("bo", "revoked"),
            ("ana", "revoked"),
            ("ana", "added"),
            ("bo", "added"),
            ("ana", "added"),
        ],
        "{log}"
    );
    let bytes = database_bytes(&db.0);
    for secret in [ANA_PASSWORD, BO_PASSWORD, &ana_token, &bo_token, &ana_box] {
        assert!(!contains(&bytes, secret), "a secret in clear: {secret}");
    }
    for dir in [ana_dir, bo_dir] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// `serve` warns that every call will be refused only when nobody can
/// authenticate: no token and no user with a password.
#[test]
fn serve_warns_only_when_nobody_can_authenticate() {
    use xq_tests::procs::{Coordinator, TempDir};
    const WARNING: &str = "nobody can authenticate";
    let dir = TempDir::new("serve-warning");
    let served_log = |db: &Path, name: &str| {
        let log = dir.join(name);
        let mut server = Coordinator::start(db, 0, &[], &log);
        // The server logs this once its start-up checks are done.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let mut text = String::new();
        while !text.contains("coordinator listening") && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            text = std::fs::read_to_string(&log).unwrap_or_default();
        }
        server.interrupt();
        assert!(text.contains("coordinator listening"), "{text}");
        text
    };
    let empty = dir.join("empty.db");
    let log = served_log(&empty, "empty.log");
    assert!(log.contains(WARNING), "{log}");
    let users = dir.join("users.db");
    add_user(&users, "cy", "admin", "cy-login-words");
    let log = served_log(&users, "users.log");
    assert!(!log.contains(WARNING), "{log}");
}
