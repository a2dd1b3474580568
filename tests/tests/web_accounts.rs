//! Accounts on the web view, in a headless Chromium against a real server:
//! a developer signs up and submits a test from the form, which waits for
//! approval; she cannot approve it; an approver signs in (after a wrong
//! password), approves it from the approval queue and trusts her; and a form
//! without its CSRF token, an expired session and repeated wrong passwords
//! are refused. The cookies carry their flags, and the database file holds
//! neither a password nor a session secret.

use std::time::Duration;

use serde_json::{Value, json};
use xq_coordinator::auth::Rate;
use xq_coordinator::auth::sign_in::SignInLimits;
use xq_coordinator::server::ServerConfig;
use xq_proto::pb;
use xq_tests::accounts::{add_user, contains, database_bytes};
use xq_tests::browser::Browser;
use xq_tests::cluster::{TempDb, TestServer, admin, fast_config, registered_worker, status};
use xq_tests::web::{form_csrf, set_cookie};
use xq_tests::{coordinator_cli, web};

const DEV_PASSWORD: &str = "dana-secret-words";
const APPROVER_PASSWORD: &str = "cy-secret-words";
const NEW_PASSWORD: &str = "dana-second-secret";
const ROOT_PASSWORD: &str = "root-secret-words";

/// Fills the sign-in form with `name` and `password` and sends it.
fn sign_in(b: &mut Browser, base: &str, name: &str, password: &str) -> String {
    b.open(&format!("{base}/sign-in"));
    b.fill("#sign-in-form input[name=name]", name);
    b.fill("#sign-in-form input[name=password]", password);
    b.click_and_load("#sign-in-form #submit");
    b.text()
}

/// The signed-in user the page's header shows, if any.
fn me(b: &mut Browser) -> Value {
    b.eval("document.getElementById('me') && document.getElementById('me').dataset.user")
}

/// The browser's cookie `name` for the page.
fn cookie(b: &mut Browser, name: &str) -> Value {
    let all = b.call("Network.getCookies", json!({}));
    all["cookies"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == name))
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn a_developer_signs_up_and_submits_an_approver_approves_and_refusals_hold() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let db = TempDb::new("web-accounts");
    add_user(&db.0, "cy", "approver", APPROVER_PASSWORD);
    // Addresses get many attempts here, so that the lock-out of an address
    // from a name is what refuses (the per-address bucket has its unit test).
    let config = ServerConfig {
        sign_in: SignInLimits {
            per_address: Rate {
                per_second: 1.0,
                burst: 100.0,
            },
            ..SignInLimits::default()
        },
        ..fast_config(Duration::from_secs(30))
    };
    let server = rt.block_on(TestServer::start_with_web("127.0.0.1:0", &db.0, config));
    let base = server.web_url();
    let mut grpc = rt.block_on(admin(&server.url()));
    let profile = TempDb::new("web-accounts-chromium");
    let mut b = Browser::start(&profile.0, (1280, 900));

    // A developer signs up and is signed in, untrusted.
    b.open(&format!("{base}/sign-up"));
    b.fill("#sign-up-form input[name=name]", "dana");
    b.fill("#sign-up-form input[name=password]", DEV_PASSWORD);
    b.fill("#sign-up-form input[name=confirm]", DEV_PASSWORD);
    b.click_and_load("#sign-up-form #submit");
    assert_eq!(me(&mut b), "dana", "{}", b.text());
    assert!(b.text().contains("untrusted"), "{}", b.text());
    let session = cookie(&mut b, "xq_session");
    assert_eq!(session["httpOnly"], true, "{session}");
    assert_eq!(session["sameSite"], "Lax", "{session}");
    assert_eq!(session["secure"], false, "plain HTTP: {session}");
    let secret = session["value"].as_str().expect("a session").to_owned();
    let csrf = cookie(&mut b, "xq_csrf");
    assert_eq!(
        (&csrf["httpOnly"], &csrf["sameSite"]),
        (&json!(true), &json!("Strict"))
    );

    // She submits a games test from the form; it waits for approval.
    b.open(&format!("{base}/runs/new"));
    b.fill("#kind", "games");
    b.fill("input[name=name]", "dana patch");
    b.fill("input[name=pairs]", "2");
    b.fill("input[name=nodes]", "200");
    b.click_and_load("#create");
    let path = b.location();
    let run: u64 = path
        .strip_prefix("/runs/")
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("not a run page: {path}: {}", b.text()));
    let state = rt.block_on(status(&mut grpc, run)).state();
    assert_eq!(state, pb::RunState::Pending);
    assert_eq!(b.eval("!!document.getElementById('approve')"), false);

    // She cannot approve it, even with her own CSRF token.
    b.eval(&format!(
        "(() => {{ const f = document.createElement('form'); f.method = 'post';
           f.action = '/runs/{run}/approve'; f.id = 'probe';
           f.innerHTML = '<input name=csrf value=\"' +
             document.querySelector('input[name=csrf]').value + '\"><button>go</button>';
           document.body.appendChild(f); }})()"
    ));
    b.click_and_load("#probe button");
    let refused = b.text();
    assert!(refused.contains("403"), "{refused}");
    assert_eq!(
        rt.block_on(status(&mut grpc, run)).state(),
        pb::RunState::Pending
    );

    // A form without its CSRF token is refused and changes nothing.
    b.open(&format!("{base}/runs/{run}"));
    b.eval("document.querySelector('#manage form input[name=csrf]').remove()");
    b.click_and_load("#stop");
    let refused = b.text();
    assert!(
        refused.contains("403") && refused.contains("CSRF"),
        "{refused}"
    );
    assert_eq!(
        rt.block_on(status(&mut grpc, run)).state(),
        pb::RunState::Pending
    );

    // She signs out; the approver mistypes, then signs in.
    b.open(&format!("{base}/"));
    b.click_and_load("#sign-out");
    assert_eq!(me(&mut b), Value::Null);
    let wrong = sign_in(&mut b, &base, "cy", "not the password");
    assert!(wrong.contains("wrong user name or password"), "{wrong}");
    assert_eq!(me(&mut b), Value::Null);
    sign_in(&mut b, &base, "cy", APPROVER_PASSWORD);
    assert_eq!(me(&mut b), "cy");

    // The approval queue: the approver approves the test, and trusts her.
    b.open(&format!("{base}/approvals"));
    b.click_and_load(&format!("tr[data-run='{run}'] button.approve"));
    assert_eq!(b.location(), format!("/runs/{run}"));
    assert_eq!(
        rt.block_on(status(&mut grpc, run)).state(),
        pb::RunState::Active
    );
    // The approver changes its cap and priority from its page.
    b.fill("#modify input[name=games]", "40");
    b.fill("#modify input[name=priority]", "3");
    b.click_and_load("#change");
    let changed = rt.block_on(status(&mut grpc, run));
    assert_eq!(changed.target_pairs, 20, "{changed:?}");
    assert_eq!(
        b.eval("document.getElementById('scheduling').dataset.priority"),
        "3"
    );
    b.fill("#modify input[name=games]", "7");
    b.click_and_load("#change");
    assert!(b.text().contains("even number"), "{}", b.text());
    b.open(&format!("{base}/users"));
    b.click_and_load("tr[data-user='dana'] button.trust");
    assert_eq!(
        b.eval("document.querySelector(\"tr[data-user='dana']\").dataset.trusted"),
        "yes"
    );
    b.open(&format!("{base}/events"));
    let log = b.text();
    for needle in [
        "dana signed up",
        "games run \"dana patch\"",
        "set dana to developer, trusted",
        "pairs 2 → 20, priority 0 → 3",
    ] {
        assert!(
            log.contains(needle),
            "{needle} missing from the events:\n{log}"
        );
    }
    assert_eq!(
        b.eval("document.querySelectorAll('tr[data-event-kind=approve]').length"),
        1
    );

    // She changes her password: the old one no longer signs in.
    b.open(&format!("{base}/"));
    b.click_and_load("#sign-out");
    sign_in(&mut b, &base, "dana", DEV_PASSWORD);
    b.open(&format!("{base}/account"));
    b.fill("#password-form input[name=current]", DEV_PASSWORD);
    b.fill("#password-form input[name=password]", NEW_PASSWORD);
    b.fill("#password-form input[name=confirm]", NEW_PASSWORD);
    b.click_and_load("#password-form button");
    assert_eq!(me(&mut b), "dana", "{}", b.text());
    b.click_and_load("#sign-out");
    let old = sign_in(&mut b, &base, "dana", DEV_PASSWORD);
    assert!(old.contains("wrong user name or password"), "{old}");
    sign_in(&mut b, &base, "dana", NEW_PASSWORD);
    assert_eq!(me(&mut b), "dana");

    // She makes a worker token for her machine, shown once, and revokes it.
    b.open(&format!("{base}/account"));
    b.fill("#token-form input[name=name]", "dana-box");
    b.fill("#token-form select[name=role]", "worker");
    b.click_and_load("#token-form button");
    let made = b.eval("document.getElementById('made-token').textContent");
    let made = made.as_str().expect("the new token").to_owned();
    assert!(made.starts_with("xqt_"), "{made}");
    b.open(&format!("{base}/account"));
    assert!(!b.text().contains(&made), "a token is shown twice");
    b.click_and_load("tr[data-token='dana-box'] button.revoke");
    assert_eq!(
        b.eval("document.querySelector(\"tr[data-token='dana-box']\").dataset.revoked"),
        "yes"
    );

    // An expired session signs nobody in, and its forms are refused.
    b.open(&format!("{base}/runs/{run}"));
    let conn = rusqlite::Connection::open(&db.0).unwrap();
    conn.execute("UPDATE sessions SET expires_ms = created_ms + 1", [])
        .unwrap();
    b.click_and_load("#stop");
    let refused = b.text();
    assert!(
        refused.contains("401") && refused.contains("sign in"),
        "{refused}"
    );
    assert_eq!(
        rt.block_on(status(&mut grpc, run)).state(),
        pb::RunState::Active
    );
    b.open(&format!("{base}/"));
    assert_eq!(me(&mut b), Value::Null);

    // Repeated wrong passwords lock this address out of the name, even for
    // the right password (another address is not: tests/web_tls.rs).
    for _ in 0..5 {
        let wrong = sign_in(&mut b, &base, "dana", "guess guess");
        assert!(wrong.contains("wrong user name or password"), "{wrong}");
    }
    let locked = sign_in(&mut b, &base, "dana", NEW_PASSWORD);
    assert!(locked.contains("too many sign-in attempts"), "{locked}");
    assert_eq!(me(&mut b), Value::Null);

    // Behind an HTTPS proxy the cookies are Secure.
    let answer = rt.block_on(web::request(
        http::Method::GET,
        &format!("{base}/sign-in"),
        &[("x-forwarded-proto", "https")],
        "",
    ));
    let set = answer.headers["set-cookie"].to_str().unwrap();
    assert!(
        set.contains("; Secure") && set.contains("HttpOnly"),
        "{set}"
    );

    drop(b);
    let bytes = database_bytes(&db.0);
    for secret in [
        DEV_PASSWORD,
        NEW_PASSWORD,
        APPROVER_PASSWORD,
        &secret,
        &made,
    ] {
        assert!(!contains(&bytes, secret), "{secret} is in the database");
    }
    rt.block_on(server.stop());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_sign_up_only_an_admin_adds_users_and_workers_show_their_owner() {
    let db = TempDb::new("web-no-sign-up");
    let path = db.0.clone();
    let box_token = tokio::task::spawn_blocking(move || {
        add_user(&path, "root", "admin", ROOT_PASSWORD);
        add_user(&path, "cy", "approver", APPROVER_PASSWORD);
        let db = path.to_str().unwrap();
        coordinator_cli([
            "token", "add", "--role", "worker", "root-box", "--user", "root", "--db", db,
        ])
    })
    .await
    .unwrap();
    let config = ServerConfig {
        open_sign_up: false,
        ..fast_config(Duration::from_secs(30))
    };
    let server = TestServer::start_with_web("127.0.0.1:0", &db.0, config).await;
    let base = server.web_url();

    // Nobody signs up.
    let form = web::get(&format!("{base}/sign-up")).await;
    assert_eq!(form.status.as_u16(), 403, "{}", form.body);
    assert!(form.body.contains("ask an admin"), "{}", form.body);
    let sign_in = web::get(&format!("{base}/sign-in")).await;
    assert!(
        !sign_in.body.contains("href=\"/sign-up\""),
        "{}",
        sign_in.body
    );
    let csrf = set_cookie(&sign_in, "xq_csrf");
    let anonymous = format!("xq_csrf={csrf}");
    let posted = web::post_form(
        &format!("{base}/sign-up"),
        &[("cookie", &anonymous)],
        &format!("csrf={csrf}&name=eve&password=eve-secret-words&confirm=eve-secret-words"),
    )
    .await;
    assert_eq!(posted.status.as_u16(), 403, "{}", posted.body);

    // An approver may not add users; an admin may, from the users page.
    let session = async |name: &str, password: &str| {
        let answer = web::post_form(
            &format!("{base}/sign-in"),
            &[("cookie", &anonymous)],
            &format!("csrf={csrf}&name={name}&password={password}"),
        )
        .await;
        assert_eq!(answer.status.as_u16(), 303, "{}", answer.body);
        let cookie = format!("xq_session={}", set_cookie(&answer, "xq_session"));
        let page = web::request(
            http::Method::GET,
            &format!("{base}/users"),
            &[("cookie", &cookie)],
            "",
        )
        .await;
        assert_eq!(page.status.as_u16(), 200, "{}", page.body);
        (cookie, form_csrf(&page.body))
    };
    let add = "name=eve&role=developer&password=eve-secret-words";
    let (cy, cy_csrf) = session("cy", APPROVER_PASSWORD).await;
    let refused = web::post_form(
        &format!("{base}/users"),
        &[("cookie", &cy)],
        &format!("csrf={cy_csrf}&{add}"),
    )
    .await;
    assert_eq!(refused.status.as_u16(), 403, "{}", refused.body);
    assert!(refused.body.contains("admin role"), "{}", refused.body);
    let (root, root_csrf) = session("root", ROOT_PASSWORD).await;
    let added = web::post_form(
        &format!("{base}/users"),
        &[("cookie", &root)],
        &format!("csrf={root_csrf}&{add}"),
    )
    .await;
    assert_eq!(added.status.as_u16(), 303, "{}", added.body);

    // The admin's worker token registers a machine: the workers page says whose.
    registered_worker(&server.url(), box_token.trim(), "root-box-1").await;
    let workers = web::get(&format!("{base}/workers")).await.body;
    assert!(workers.contains("data-owner=\"root\""), "{workers}");
    server.stop().await;

    let conn = rusqlite::Connection::open(&db.0).unwrap();
    let who: String = conn
        .query_row("SELECT role FROM users WHERE name = 'eve'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(who, "developer");
    let log: String = conn
        .query_row(
            "SELECT actor || ': ' || detail FROM events WHERE kind = 'user' ORDER BY id DESC",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(log, "root: added eve (developer)");
}
