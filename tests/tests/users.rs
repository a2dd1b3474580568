//! Users and run authors through the real binary and server: users and
//! their tokens are made with the CLI on the database file, a run created
//! with a user's token records that user as its author (`status`,
//! `report --json`, the web view's list and its author filter), each change
//! is in the events log with its actor (`events`, `/events`), a developer
//! stops only their own runs, an untrusted developer's test waits for an
//! approver who is not its author (and a pending run gets no workers), the
//! author changes a running test's cap and priority (another developer may
//! not, and what would invalidate its statistics is refused by name) and the
//! next lease follows the change, and the database file holds no password
//! or token in clear.

use std::process::Command;
use std::time::Duration;

use xq_proto::pb;
use xq_tests::accounts::{add_user, contains, database_bytes};
use xq_tests::cluster::{
    TempDb, TestServer, create, drawn, fast_config, games_spec, raw_worker, run_client, status,
};
use xq_tests::{binary, coordinator_cli, web};

const PASSWORD: &str = "ana-secret-words";

/// `xq-coordinator ARGS…` that is expected to fail: its stderr.
fn refused(args: &[String]) -> String {
    let out = Command::new(binary("xq-coordinator"))
        .args(args)
        .output()
        .expect("run xq-coordinator");
    assert!(
        !out.status.success(),
        "{args:?} succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Users of `db` with these names and roles, each with a token of their own
/// (`NAME-cli`): the tokens, in the same order.
fn users_with_tokens<const N: usize>(
    db: &std::path::Path,
    users: [(&str, &str); N],
) -> [String; N] {
    users.map(|(name, role)| {
        add_user(db, name, role, PASSWORD);
        token_for(db, &format!("{name}-cli"), name)
    })
}

/// A token for `user` (made on the database file), printed once.
fn token_for(db: &std::path::Path, name: &str, user: &str) -> String {
    let db = db.to_str().expect("a UTF-8 path");
    coordinator_cli([
        "token", "add", "--role", "personal", name, "--user", user, "--db", db,
    ])
    .trim()
    .to_owned()
}

/// A served database with two developers and an approver named `names`,
/// each with a token: the database, the server and the tokens.
async fn two_developers_and_an_approver(
    db: &str,
    names: [&'static str; 3],
) -> (TempDb, TestServer, [String; 3]) {
    let db = TempDb::new(db);
    let path = db.0.clone();
    let roles = ["developer", "developer", "approver"];
    let tokens = tokio::task::spawn_blocking(move || {
        users_with_tokens(&path, [0, 1, 2].map(|i| (names[i], roles[i])))
    })
    .await
    .unwrap();
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(10))).await;
    (db, server, tokens)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_developer_stops_only_their_own_runs_an_approver_anyones() {
    let (db, server, [ana, bo, cy]) =
        two_developers_and_an_approver("users-manage", ["ana", "bo", "cy"]).await;
    let url = server.url();
    let status = tokio::task::spawn_blocking(move || {
        let remote = |token: &str| {
            [
                "--coordinator".to_owned(),
                url.clone(),
                "--token".to_owned(),
                token.to_owned(),
            ]
        };
        let create = |token: &str| {
            coordinator_cli(
                ["games", "--pairs", "1000", "--nodes", "100"]
                    .map(str::to_owned)
                    .into_iter()
                    .chain(remote(token)),
            )
            .trim()
            .to_owned()
        };
        let (ana_run, bo_run) = (create(&ana), create(&bo));
        let verb = |verb: &str, run: &str, token: &str| {
            let mut a = vec![verb.to_owned(), run.to_owned()];
            a.extend(remote(token));
            a
        };
        let args = |run: &str, token: &str| verb("stop", run, token);
        let err = refused(&args(&bo_run, &ana));
        assert!(
            err.contains("PermissionDenied") || err.contains("permission"),
            "{err}"
        );
        assert!(
            err.contains("developer may change or stop only their own runs"),
            "{err}"
        );
        coordinator_cli(args(&ana_run, &ana));
        coordinator_cli(args(&bo_run, &cy));
        let stopped = coordinator_cli(["status".to_owned()].into_iter().chain(remote(&cy)));
        assert_eq!(stopped.matches("stopped").count(), 2, "{stopped}");
        // Resuming follows the same rule; an untrusted developer's test
        // waits for approval again, an approver's resume plays at once.
        let err = refused(&verb("resume", &ana_run, &bo));
        assert!(err.contains("only their own runs"), "{err}");
        let line = coordinator_cli(verb("resume", &ana_run, &ana));
        assert!(line.contains("pending"), "{line}");
        let line = coordinator_cli(verb("resume", &bo_run, &cy));
        assert!(line.contains("active"), "{line}");
        let err = refused(&verb("resume", &bo_run, &cy));
        assert!(err.contains("only a stopped run resumes"), "{err}");
        coordinator_cli(["status".to_owned()].into_iter().chain(remote(&cy)))
    })
    .await
    .unwrap();
    server.stop().await;
    assert_eq!(status.matches("pending").count(), 1, "{status}");
    assert_eq!(status.matches("active").count(), 1, "{status}");
    let path = db.0.clone();
    let log = tokio::task::spawn_blocking(move || {
        let db = path.to_str().unwrap().to_owned();
        coordinator_cli(["events", "--kind", "stop", "--db", db.as_str()])
    })
    .await
    .unwrap();
    let who: Vec<&str> = log
        .lines()
        .map(|l| l.split_whitespace().nth(2).unwrap())
        .collect();
    assert_eq!(who, ["cy", "ana"], "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_records_the_user_whose_token_created_it() {
    let db = TempDb::new("users");
    let path = db.0.clone();
    let (token, listed) = tokio::task::spawn_blocking(move || {
        add_user(&path, "ana", "developer", PASSWORD);
        let token = coordinator_cli(
            [
                "token",
                "add",
                "--role",
                "admin",
                "ana-laptop",
                "--user",
                "ana",
                "--db",
            ]
            .map(std::ffi::OsString::from)
            .into_iter()
            .chain([path.clone().into_os_string()]),
        )
        .trim()
        .to_owned();
        let listed = coordinator_cli(
            ["user", "list", "--db"]
                .map(std::ffi::OsString::from)
                .into_iter()
                .chain([path.into_os_string()]),
        );
        (token, listed)
    })
    .await
    .unwrap();
    assert!(token.starts_with("xqt_"), "{token}");
    assert!(
        listed.contains("ana") && listed.contains("developer"),
        "{listed}"
    );

    let server =
        TestServer::start_with_web("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(10)))
            .await;
    let url = server.url();
    let (status, report) = {
        let (url, token) = (url.clone(), token.clone());
        tokio::task::spawn_blocking(move || {
            let remote = ["--coordinator", url.as_str(), "--token", token.as_str()];
            let id = coordinator_cli(
                ["games", "--pairs", "1", "--nodes", "100"]
                    .into_iter()
                    .chain(remote),
            )
            .trim()
            .to_owned();
            let status = coordinator_cli(["status"].into_iter().chain(remote));
            let report =
                coordinator_cli(["report", id.as_str(), "--json"].into_iter().chain(remote));
            coordinator_cli(["stop", id.as_str()].into_iter().chain(remote));
            (status, report)
        })
        .await
        .unwrap()
    };
    assert!(status.contains("by ana"), "{status}");
    let report: serde_json::Value = serde_json::from_str(&report).expect("report json");
    assert_eq!(report["author"], "ana", "{report}");

    let base = server.web_url();
    let mine = web::get(&format!("{base}/?author=ana")).await;
    assert!(mine.status.is_success(), "{}", mine.body);
    assert!(mine.body.contains("data-run=\"1\""), "{}", mine.body);
    assert!(mine.body.contains(">ana</a>"), "{}", mine.body);
    let theirs = web::get(&format!("{base}/?author=bo")).await;
    assert!(!theirs.body.contains("data-run=\"1\""), "{}", theirs.body);
    let page = web::get(&format!("{base}/runs/1")).await;
    assert!(
        page.body.contains("by <a href=\"/?author=ana\">ana</a>"),
        "{}",
        page.body
    );
    let log = web::get(&format!("{base}/events?user=ana")).await;
    assert!(log.status.is_success(), "{}", log.body);
    for kind in ["create", "stop"] {
        assert!(
            log.body.contains(&format!("data-event-kind=\"{kind}\"")),
            "{kind}: {}",
            log.body
        );
    }
    assert!(
        !log.body.contains("data-event-kind=\"token\""),
        "{}",
        log.body
    );
    let bad = web::get(&format!("{base}/events?kind=purge")).await;
    assert_eq!(bad.status.as_u16(), 400, "{}", bad.body);

    // A revoked token is refused at the next call, with the server running.
    let (path, url, revoked_token) = (db.0.clone(), url.clone(), token.clone());
    let err = tokio::task::spawn_blocking(move || {
        let db = path.to_str().unwrap().to_owned();
        coordinator_cli(["token", "revoke", "ana-laptop", "--db", db.as_str()]);
        refused(&[
            "status".to_owned(),
            "--coordinator".to_owned(),
            url,
            "--token".to_owned(),
            revoked_token,
        ])
    })
    .await
    .unwrap();
    assert!(err.contains("unknown or revoked token"), "{err}");
    server.stop().await;

    // The log, newest first: the revocation, the stop and the create by ana,
    // then the token and the user the CLI added.
    let path = db.0.clone();
    let log = tokio::task::spawn_blocking(move || {
        coordinator_cli(
            ["events", "--db"]
                .map(std::ffi::OsString::from)
                .into_iter()
                .chain([path.into_os_string()]),
        )
    })
    .await
    .unwrap();
    let lines: Vec<Vec<&str>> = log
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let who_what: Vec<(&str, &str)> = lines.iter().map(|w| (w[2], w[3])).collect();
    assert_eq!(
        who_what,
        [
            ("cli", "token"),
            ("ana", "stop"),
            ("ana", "create"),
            ("cli", "token"),
            ("cli", "user")
        ],
        "{log}"
    );
    assert!(lines[1][4] == "run" && lines[1][5] == "1", "{log}");

    let bytes = database_bytes(&db.0);
    assert!(!contains(&bytes, PASSWORD), "a password in clear");
    assert!(!contains(&bytes, &token), "a token in clear");
    assert!(
        contains(&bytes, "$argon2id$"),
        "the password's hash is stored"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_developers_test_waits_for_an_approver_who_is_not_its_author() {
    let (db, server, [dee, eve, cy]) =
        two_developers_and_an_approver("users-approval", ["dee", "eve", "cy"]).await;
    let url = server.url();
    let mut as_dee = run_client(&url, Some(&dee));
    let waiting = create(&mut as_dee, games_spec(4, 2)).await;
    assert_eq!(
        status(&mut as_dee, waiting).await.state(),
        pb::RunState::Pending
    );
    // A pending run gets no workers.
    let (mut worker, worker_id) = raw_worker(&url, "w").await;
    let none = worker
        .request_work(pb::RequestWorkRequest { worker_id })
        .await
        .unwrap()
        .into_inner();
    assert!(none.lease.is_none(), "a pending run was leased");
    // Its author and another developer may not approve it; an approver may.
    let mine = run_client(&url, Some(&dee))
        .approve_run(pb::ApproveRunRequest { run_id: waiting })
        .await
        .unwrap_err();
    assert_eq!(mine.code(), tonic::Code::PermissionDenied, "{mine}");
    assert!(mine.message().contains("its author may not"), "{mine}");
    let peer = run_client(&url, Some(&eve))
        .approve_run(pb::ApproveRunRequest { run_id: waiting })
        .await
        .unwrap_err();
    assert!(peer.message().contains("a developer may not"), "{peer}");
    let rejected = create(&mut as_dee, games_spec(4, 2)).await;
    let (url2, cy2) = (url.clone(), cy.clone());
    let (approved, refused_line) = tokio::task::spawn_blocking(move || {
        let remote = ["--coordinator", url2.as_str(), "--token", cy2.as_str()];
        let approved = coordinator_cli(
            ["approve", waiting.to_string().as_str()]
                .into_iter()
                .chain(remote),
        );
        let refused_line = coordinator_cli(
            [
                "reject",
                rejected.to_string().as_str(),
                "--reason",
                "tested last week",
            ]
            .into_iter()
            .chain(remote),
        );
        (approved, refused_line)
    })
    .await
    .unwrap();
    assert!(approved.contains("active"), "{approved}");
    assert!(
        refused_line.contains("rejected") && refused_line.contains("[rejected: tested last week]"),
        "{refused_line}"
    );
    let lease = worker
        .request_work(pb::RequestWorkRequest { worker_id })
        .await
        .unwrap()
        .into_inner()
        .lease
        .expect("the approved run is leased");
    assert_eq!(lease.run_id, waiting);
    let twice = run_client(&url, Some(&cy))
        .approve_run(pb::ApproveRunRequest { run_id: rejected })
        .await
        .unwrap_err();
    assert!(
        twice.message().contains("is rejected, not pending"),
        "{twice}"
    );
    server.stop().await;
    let path = db.0.clone();
    let log = tokio::task::spawn_blocking(move || {
        let db = path.to_str().unwrap().to_owned();
        coordinator_cli(["events", "--user", "cy", "--db", db.as_str()])
    })
    .await
    .unwrap();
    let kinds: Vec<&str> = log
        .lines()
        .map(|l| l.split_whitespace().nth(3).unwrap())
        .collect();
    assert_eq!(kinds, ["reject", "approve"], "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_author_changes_a_running_test_and_the_next_lease_follows() {
    let (db, server, [fay, gus, cy]) =
        two_developers_and_an_approver("users-modify", ["fay", "gus", "cy"]).await;
    let url = server.url();
    // Fay's test (approved by cy) and cy's own, alike: 20 pairs in leases of 4.
    let mut as_fay = run_client(&url, Some(&fay));
    let mut as_cy = run_client(&url, Some(&cy));
    let mine = create(&mut as_fay, games_spec(20, 4)).await;
    as_cy
        .approve_run(pb::ApproveRunRequest { run_id: mine })
        .await
        .unwrap();
    let theirs = create(&mut as_cy, games_spec(20, 4)).await;
    let (mut worker, worker_id) = raw_worker(&url, "w").await;
    let mut lease = async || {
        worker
            .request_work(pb::RequestWorkRequest { worker_id })
            .await
            .unwrap()
            .into_inner()
            .lease
            .expect("a lease")
    };
    let first = lease().await;
    assert_eq!(first.run_id, mine, "the older of two equal runs");

    // Another developer may neither change nor stop it, by the client or
    // the CLI; what would invalidate its statistics is refused by name.
    let denied = run_client(&url, Some(&gus))
        .modify_run(pb::ModifyRunRequest {
            run_id: mine,
            priority: Some(9),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(denied.code(), tonic::Code::PermissionDenied, "{denied}");
    let (url2, fay2, gus2) = (url.clone(), fay.clone(), gus.clone());
    let changed = tokio::task::spawn_blocking(move || {
        let run = mine.to_string();
        let args = |token: &str, more: &[&str]| {
            let mut a: Vec<String> = ["modify", run.as_str()].map(str::to_owned).to_vec();
            a.extend(more.iter().map(|m| (*m).to_owned()));
            a.extend(["--coordinator", url2.as_str(), "--token", token].map(str::to_owned));
            a
        };
        let err = refused(&args(&gus2, &["--priority", "9"]));
        assert!(
            err.contains("developer may change or stop only their own runs"),
            "{err}"
        );
        let mut stop = args(&gus2, &[]);
        stop[0] = "stop".to_owned();
        assert!(refused(&stop).contains("only their own runs"));
        for (flag, what) in [
            (["--elo0", "-1"], "the SPRT bounds (--elo0)"),
            (["--nodes", "500"], "the limits (--nodes)"),
            (["--rules", "conversion"], "the rules (--rules)"),
            (["--book", "asset:00"], "the openings (--book)"),
        ] {
            let err = refused(&args(&fay2, &flag));
            assert!(
                err.contains(&format!(
                    "cannot change {what} of a running test: it would invalidate the \
                     statistics; start a new run"
                )),
                "{err}"
            );
        }
        let err = refused(&args(&fay2, &["--pairs", "2"]));
        assert!(err.contains("handed out 4 pairs"), "{err}");
        coordinator_cli(args(&fay2, &["--games", "12", "--priority", "2"]))
    })
    .await
    .unwrap();
    assert!(
        changed.contains("games 0/12") && changed.contains("priority 2"),
        "{changed}"
    );

    // The next lease: the raised priority, cut to the new cap of 6 pairs;
    // then the other run, since this one has handed out every pair.
    let second = lease().await;
    assert_eq!(second.run_id, mine);
    let slice = second.work.as_ref().expect("work");
    assert_eq!(
        (slice.pairs, slice.openings.as_ref().map(|o| o.offset)),
        (2, Some(4))
    );
    assert_eq!(lease().await.run_id, theirs);
    for done in [&first, &second] {
        worker
            .submit_result(pb::SubmitResultRequest {
                worker_id,
                lease_id: done.lease_id,
                results: Some(drawn(done)),
            })
            .await
            .unwrap();
    }
    let ended = status(&mut as_fay, mine).await;
    assert_eq!(ended.state(), pb::RunState::Finished);
    assert_eq!(ended.totals.map(|t| t.pairs), Some(6));
    server.stop().await;

    let path = db.0.clone();
    let log = tokio::task::spawn_blocking(move || {
        let db = path.to_str().unwrap().to_owned();
        let run = mine.to_string();
        coordinator_cli(["events", "--run", run.as_str(), "--db", db.as_str()])
    })
    .await
    .unwrap();
    let steps: Vec<(&str, &str)> = log
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[2], w[3])
        })
        .collect();
    assert_eq!(
        steps,
        [("fay", "modify"), ("cy", "approve"), ("fay", "create")],
        "{log}"
    );
    assert!(
        log.lines()
            .next()
            .is_some_and(|l| l.ends_with("pairs 20 → 6, priority 0 → 2")),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_and_events_work_at_a_served_coordinator_as_on_the_file() {
    let db = TempDb::new("users-remote");
    let path = db.0.clone();
    let [root, ana] = tokio::task::spawn_blocking(move || {
        users_with_tokens(&path, [("root", "admin"), ("ana", "developer")])
    })
    .await
    .unwrap();
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(10))).await;
    let url = server.url();
    let (listed, refusal, log) = tokio::task::spawn_blocking(move || {
        let at = |token: &str, args: &[&str]| {
            let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            a.extend(["--coordinator".to_owned(), url.clone()]);
            a.extend(["--token".to_owned(), token.to_owned()]);
            a
        };
        coordinator_cli(at(&root, &["user", "add", "zed", "--role", "developer"]));
        coordinator_cli(at(&root, &["user", "set", "zed", "--role", "approver"]));
        let listed = coordinator_cli(at(&root, &["user", "list"]));
        let refusal = refused(&at(&ana, &["user", "add", "mallory", "--role", "admin"]));
        let log = coordinator_cli(at(&ana, &["events", "--kind", "user"]));
        (listed, refusal, log)
    })
    .await
    .unwrap();
    server.stop().await;
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("zed ") && l.contains("approver")),
        "{listed}"
    );
    assert!(
        refusal.contains("this needs the admin role; you are developer"),
        "{refusal}"
    );
    // Over the network the change is the admin's; on the file, the CLI's.
    let who: Vec<&str> = log
        .lines()
        .map(|l| l.split_whitespace().nth(2).unwrap())
        .collect();
    assert_eq!(who, ["root", "root", "cli", "cli"], "{log}");
    assert!(!log.contains("mallory"), "{log}");
}
