//! Runs with an engine built from a commit, through the gRPC client against
//! a real server on 127.0.0.1:0 (no worker builds here; see
//! `build_from_source.rs` for that): what creating such a run refuses, which
//! workers get its leases, and who may report a failed build.

use std::time::Duration;

use tonic::Code;
use xq_coordinator::auth::Role;
use xq_proto::pb;
use xq_tests::accounts::add_token;
use xq_tests::cluster::*;

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

fn register(name: &str, tools: &[&str]) -> pb::RegisterRequest {
    pb::RegisterRequest {
        name: name.to_owned(),
        threads: 1,
        version: "0.1.0".to_owned(),
        bench_signature: 0,
        bench_nps: 0,
        machine: None,
        tools: tools.iter().map(|t| t.to_string()).collect(),
        target: String::new(),
        updated_from: String::new(),
        machine_id: String::new(),
    }
}

/// A games run whose dev engine is built from `repo` at `commit` (or
/// `git_ref`) with make.
fn source_spec(repo: &str, commit: &str, git_ref: &str) -> pb::RunSpec {
    let mut spec = games_spec(8, 2);
    let Some(pb::run_spec::Kind::Games(games)) = spec.kind.as_mut() else {
        unreachable!()
    };
    games.engines = Some(pb::EngineChoice {
        dev_source: Some(pb::EngineRef {
            name: "engine@main".to_owned(),
            signature: Some(4242),
            protocol: pb::EngineProtocol::Uci.into(),
            source: Some(pb::EngineSource {
                repo: repo.to_owned(),
                commit: commit.to_owned(),
                git_ref: git_ref.to_owned(),
                build: "make engine".to_owned(),
                binary: "engine".to_owned(),
                needs: Vec::new(),
            }),
            ..Default::default()
        }),
        ..Default::default()
    });
    spec
}

async fn create_err(url: &str, spec: pb::RunSpec) -> tonic::Status {
    admin(url)
        .await
        .create_run(pb::CreateRunRequest {
            spec: Some(spec),
            reuse_identical: false,
        })
        .await
        .unwrap_err()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_run_and_a_workers_tools_are_checked_when_they_arrive() {
    let db = TempDb::new("src-check");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(10))).await;
    let url = server.url();
    let mut rpc = worker_client(&url, Some(WORKER_TOKEN));
    for tools in [&["git", "rm"][..], &["git", "git"]] {
        let err = rpc.register(register("w", tools)).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{tools:?}: {err}");
        assert!(err.message().contains("tools"), "{err}");
    }
    // This coordinator takes https repositories only.
    let err = create_err(&url, source_spec("file:///srv/engine", COMMIT, "")).await;
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("over https only"), "{err}");
    for (repo, commit, git_ref, field) in [
        ("ext::sh -c touch% /tmp/pwned", COMMIT, "", "repo"),
        (
            "https://example.org/e.git",
            "",
            "--upload-pack=touch",
            "git_ref",
        ),
        ("https://example.org/e.git", "", "", "commit"),
        ("https://example.org/e.git", "abc", "", "commit"),
    ] {
        let err = create_err(&url, source_spec(repo, commit, git_ref)).await;
        assert_eq!(err.code(), Code::InvalidArgument, "{repo} {git_ref}: {err}");
        assert!(
            err.message()
                .contains(&format!("dev_source.engine.source.{field}")),
            "{err}"
        );
    }
    let mut both = source_spec("https://example.org/e.git", COMMIT, "");
    if let Some(pb::run_spec::Kind::Games(g)) = both.kind.as_mut() {
        g.engines.as_mut().unwrap().dev_engine = "pika".to_owned();
    }
    let err = create_err(&url, both).await;
    assert!(err.message().contains("not both"), "{err}");
    // A signature is a count of at least 1, of a bench or of a fixed search
    // of depth 1 to 20; a depth alone signs nothing.
    for (signature, depth, field) in [
        (Some(0), 0, "signature"),
        (None, 6, "signature_depth"),
        (Some(5), 21, "signature_depth"),
    ] {
        let mut bad = source_spec("https://example.org/e.git", COMMIT, "");
        if let Some(pb::run_spec::Kind::Games(g)) = bad.kind.as_mut() {
            let dev = g.engines.as_mut().unwrap().dev_source.as_mut().unwrap();
            (dev.signature, dev.signature_depth) = (signature, depth);
        }
        let err = create_err(&url, bad).await;
        assert_eq!(err.code(), Code::InvalidArgument, "{err}");
        assert!(
            err.message()
                .contains(&format!("dev_source.engine.{field}")),
            "{field}: {err}"
        );
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_builders_get_its_leases_and_only_the_holder_reports_a_failed_build() {
    let db = TempDb::new("src-report");
    let other = add_token(&db.0, "other", Role::Worker).await;
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
    let url = server.url();
    let run = create(
        &mut admin(&url).await,
        source_spec("https://example.org/engine.git", COMMIT, "main"),
    )
    .await;
    let mut mine = worker_client(&url, Some(WORKER_TOKEN));
    let id = |r: tonic::Response<pb::RegisterResponse>| r.into_inner().worker_id;
    let bare = id(mine.register(register("bare", &[])).await.unwrap());
    let no_make = id(mine
        .register(register("no-make", &["git", "gcc"]))
        .await
        .unwrap());
    let builder = id(mine
        .register(register("builder", &["git", "make"]))
        .await
        .unwrap());
    for worker_id in [bare, no_make] {
        let answer = mine
            .request_work(pb::RequestWorkRequest { worker_id })
            .await
            .unwrap()
            .into_inner();
        assert!(
            answer.lease.is_none(),
            "worker {worker_id} cannot build the run"
        );
    }
    let lease = mine
        .request_work(pb::RequestWorkRequest { worker_id: builder })
        .await
        .unwrap()
        .into_inner()
        .lease
        .expect("the builder gets a lease");
    let report = |worker_id: u64, log_tail: String| pb::ReportBuildFailureRequest {
        lease_id: lease.lease_id,
        worker_id,
        commit: COMMIT.to_owned(),
        reason: "the build command failed (exit status: 2)".to_owned(),
        log_tail,
    };
    let log = "main.cpp:1:22: error: expected ';' before '}' token\n".to_owned();

    // A personal token may not report; another token may not report for
    // my worker, nor its own worker for my lease.
    let err = worker_client(&url, Some(ADMIN_TOKEN))
        .report_build_failure(report(builder, log.clone()))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err}");
    let mut theirs = worker_client(&url, Some(&other));
    let err = theirs
        .report_build_failure(report(builder, log.clone()))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err}");
    let their_id = id(theirs
        .register(register("theirs", &["git", "make"]))
        .await
        .unwrap());
    let err = theirs
        .report_build_failure(report(their_id, log.clone()))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    // A log over 8 KiB, a commit that is not the run's: refused.
    let err = mine
        .report_build_failure(report(builder, "x".repeat(8193)))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let mut wrong = report(builder, log.clone());
    wrong.commit = "f".repeat(40);
    let err = mine.report_build_failure(wrong).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");

    let answer = mine
        .report_build_failure(report(builder, log.clone()))
        .await
        .unwrap()
        .into_inner();
    assert!(!answer.run_stopped, "one worker of the default three");
    // The lease was handed back: its result is not counted, and the worker
    // gets no more of the run.
    let submitted = mine
        .submit_result(pb::SubmitResultRequest {
            worker_id: builder,
            lease_id: lease.lease_id,
            results: Some(drawn(&lease)),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(submitted.status(), pb::SubmitStatus::ExpiredIgnored);
    let again = mine
        .request_work(pb::RequestWorkRequest { worker_id: builder })
        .await
        .unwrap()
        .into_inner();
    assert!(again.lease.is_none(), "no more leases of the run for it");
    let next = theirs
        .request_work(pb::RequestWorkRequest {
            worker_id: their_id,
        })
        .await
        .unwrap()
        .into_inner()
        .lease
        .expect("another builder gets the slice");
    assert_eq!(
        next.work
            .as_ref()
            .and_then(|w| w.openings.as_ref())
            .map(|o| o.offset),
        Some(0)
    );
    let answer = admin(&url)
        .await
        .get_run(pb::GetRunRequest {
            run_id: run,
            include_history: false,
        })
        .await
        .unwrap()
        .into_inner();
    let status = answer.run.unwrap();
    assert_eq!(status.state(), pb::RunState::Active);
    assert_eq!(status.totals.unwrap().pairs, 0);
    let [failure] = answer.build_failures.as_slice() else {
        panic!("{:?}", answer.build_failures)
    };
    assert_eq!(
        (failure.worker_id, failure.log_tail.as_str()),
        (builder, log.as_str())
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_page_shows_the_source_and_its_failed_builds_logs_escaped() {
    let db = TempDb::new("src-web");
    let server =
        TestServer::start_with_web("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30)))
            .await;
    let url = server.url();
    let base = server.web_url();
    let run = create(
        &mut admin(&url).await,
        source_spec("https://example.org/engine.git", COMMIT, "main"),
    )
    .await;
    let mut rpc = worker_client(&url, Some(WORKER_TOKEN));
    let builder = rpc
        .register(register("builder", &["git", "make", "g++"]))
        .await
        .unwrap()
        .into_inner()
        .worker_id;
    let lease = rpc
        .request_work(pb::RequestWorkRequest { worker_id: builder })
        .await
        .unwrap()
        .into_inner()
        .lease
        .expect("a lease");
    let log = "g++ -o engine main.cpp\n<script>alert(\"log\")</script> & error: expected ';'\n";
    rpc.report_build_failure(pb::ReportBuildFailureRequest {
        lease_id: lease.lease_id,
        worker_id: builder,
        commit: COMMIT.to_owned(),
        reason: "the build command failed (exit status: 2)".to_owned(),
        log_tail: log.to_owned(),
    })
    .await
    .unwrap();
    let page = xq_tests::web::get(&format!("{base}/runs/{run}")).await;
    assert_eq!(page.status.as_u16(), 200);
    let body = page.body;
    assert!(
        // minijinja escapes '/' too.
        body.contains(&format!(
            "example.org&#x2f;engine.git@{COMMIT}</code> <small>(main)"
        )) && body.contains("make engine")
            && body.contains("4242"),
        "{body}"
    );
    assert!(body.contains("data-build-worker=\"1\""), "{body}");
    assert!(
        body.contains("&lt;script&gt;alert(&quot;log&quot;)&lt;&#x2f;script&gt; &amp; error"),
        "the log is escaped: {body}"
    );
    assert!(!body.contains("<script>alert"), "{body}");
    let workers = xq_tests::web::get(&format!("{base}/workers")).await.body;
    assert!(
        workers.contains("data-tools=\"g++, git, make\""),
        "{workers}"
    );
    let form = xq_tests::web::get(&format!("{base}/runs/new")).await.body;
    assert!(
        form.contains("name=\"dev-repo\"") && form.contains("name=\"base-bench\""),
        "{form}"
    );
    server.stop().await;
}
