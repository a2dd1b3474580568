//! End-to-end: a command whose reader has already gone (`… | head`) ends
//! quietly and successfully instead of panicking on the closed pipe.

use std::io::Read;
use std::process::{Command, Stdio};

use xq_tests::binary;

/// Runs `bin args` with its standard output's read end closed before the
/// command can write; returns its exit status and standard error.
fn with_reader_gone(bin: &str, args: &[&str]) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(binary(bin))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {bin}: {e}"));
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("read stderr");
    (child.wait().expect("wait"), err)
}

#[test]
fn coordinator_stats_with_its_reader_gone() {
    let (status, err) = with_reader_gone(
        "xq-coordinator",
        &["stats", "elo", "--penta", "10,20,40,20,10"],
    );
    assert!(status.success(), "{status}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn worker_play_with_its_reader_gone() {
    let (status, err) = with_reader_gone(
        "xq-worker",
        &["play", "--pairs", "1", "--nodes", "200", "--quiet"],
    );
    assert!(status.success(), "{status}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}
