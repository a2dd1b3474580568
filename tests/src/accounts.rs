//! Users for the end-to-end tests, made as an admin makes them: with the
//! real CLI on the database file; and a look at that file's bytes.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use xq_coordinator::access::UserRole;
use xq_coordinator::auth::{Role, tokens};
use xq_coordinator::store::{Store, now_ms, tokens as token_rows, users};

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

/// Stores a new token of `role` for the user `admin` in the database file,
/// as `token add` does, from inside the test's runtime; returns the token.
pub async fn add_token(db: &Path, name: &str, role: Role) -> String {
    let token = tokens::generate().expect("a token");
    let hash = tokens::hash(&token);
    let name = name.to_owned();
    Store::open(db)
        .expect("open the store")
        .call(move |c| {
            let owner = users::ensure(c, "admin", UserRole::Admin, now_ms())?;
            token_rows::insert(c, &name, role, owner, &hash, now_ms())
        })
        .await
        .expect("insert the token");
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
