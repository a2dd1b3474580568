//! Users for the end-to-end tests, made as an admin makes them: with the
//! real CLI on the database file; and a look at that file's bytes.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use xq_coordinator::auth::{Role, tokens};
use xq_coordinator::events::Actor;
use xq_coordinator::service::Store;
use xq_coordinator::service::accounts::Accounts;

use crate::binary;

/// `xq-coordinator user add NAME --role ROLE --password-stdin --db DB`.
pub fn add_user(db: &Path, name: &str, role: &str, password: &str) {
    let mut child = Command::new(binary("xq-coordinator"))
        .args([
            "user",
            "add",
            name,
            "--role",
            role,
            "--password-stdin",
            "--db",
        ])
        .arg(db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run xq-coordinator user add");
    writeln!(child.stdin.take().expect("stdin"), "{password}").expect("write the password");
    let out = child.wait_with_output().expect("user add ends");
    assert!(
        out.status.success(),
        "user add: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Stores a new token of `role` for the user `admin` (made if missing) in
/// the database file, as `token add --db` does (the accounts service, as
/// the file's administrator acting for `admin`), from inside the test's
/// runtime; returns the token.
pub async fn add_token(db: &Path, name: &str, role: Role) -> String {
    let token = tokens::generate().expect("a token");
    let accounts = Accounts::new(Store::open(db).expect("open the store"));
    let admin = accounts.named_or_admin(None).await.expect("the user admin");
    accounts
        .create_token(
            Actor::cli_for(Some(admin)),
            name.to_owned(),
            role,
            tokens::hash(&token),
        )
        .await
        .expect("add the token");
    token
}

/// A personal token of the user `user`, made on the database file with
/// `token add --role personal USER-cli --user USER`.
pub fn personal_token(db: &Path, user: &str) -> String {
    let db = db.to_str().expect("a UTF-8 path");
    let name = format!("{user}-cli");
    crate::coordinator_cli([
        "token", "add", "--role", "personal", &name, "--user", user, "--db", db,
    ])
    .trim()
    .to_owned()
}

/// Every byte of the database, its WAL included.
pub fn database_bytes(db: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(db).expect("read the database");
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    if let Ok(more) = std::fs::read(&wal) {
        bytes.extend(more);
    }
    bytes
}

/// Whether `haystack` holds the bytes of `needle`.
pub fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}
