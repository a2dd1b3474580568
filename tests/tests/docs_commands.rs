//! The documented command lines are the binaries' own. Every line of a
//! fenced code block in the workspace's Markdown documents (README.md and
//! the reference docs beside the code) that starts with `xq-coordinator`,
//! `xq-worker` or `cargo run … --bin xq-coordinator|xq-worker --` is given
//! to the real binary with `--help` appended: clap reads every argument
//! before it, refusing an unknown flag (a renamed one) or a value its type
//! does not take, and then prints the help instead of running. The
//! documents' shorthand is read first: `[--x X]` as `--x X`, the first of
//! `a|b` alternatives, placeholders such as `RUN` or `N` as sample values,
//! a block's own `NAME="…"` variables, `…` dropped, `# comments` cut.
//!
//! What can run without a cluster runs fully: `--version` (the version the
//! documents state), every subcommand's `--help` (no stale wording), `cert`
//! into a temporary folder (the lines it prints parse and name the files it
//! wrote) and `make-test-release`.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};

use xq_tests::binary;
use xq_tests::docs::workspace_root as root;
use xq_tests::procs::TempDir;

/// A documented command: where it is, the program and its arguments.
#[derive(Debug, Clone)]
struct Documented {
    place: String,
    program: &'static str,
    args: Vec<String>,
}

/// The fenced code blocks of `text`: each block's first line number and
/// its lines.
fn blocks(text: &str) -> Vec<(usize, Vec<&str>)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, Vec<&str>)> = None;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            match open.take() {
                Some(block) => out.push(block),
                None => open = Some((n + 2, Vec::new())),
            }
        } else if let Some((_, lines)) = open.as_mut() {
            lines.push(line);
        }
    }
    out
}

/// `line` without a `# comment` (a `#` after a space, outside quotes).
fn without_comment(line: &str) -> &str {
    let mut quote = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev.is_whitespace() => return &line[..i],
            _ => {}
        }
        prev = c;
    }
    line
}

/// The words of a shell line (quotes removed, as the shell would).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut started = false;
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (_, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(word);
    }
    out
}

/// `[a b | c]` groups (optional) and `(a | b)` groups (one of) replaced by
/// their first alternative, innermost first.
fn first_alternatives(line: &str) -> String {
    let first = |inner: &str| inner.split(" | ").next().unwrap_or("").trim().to_owned();
    let mut text = line.to_owned();
    while let Some(close) = text.find(']') {
        let Some(open) = text[..close].rfind('[') else {
            break;
        };
        let chosen = first(&text[open + 1..close]);
        text.replace_range(open..=close, &chosen);
    }
    let mut from = 0;
    while let Some(open) = text[from..].find('(').map(|o| o + from) {
        let Some(close) = text[open..].find(')').map(|c| c + open) else {
            break;
        };
        if text[open + 1..close].contains(" | ") {
            let chosen = first(&text[open + 1..close]);
            text.replace_range(open..=close, &chosen);
            from = open;
        } else {
            from = close + 1;
        }
    }
    text
}

/// A placeholder's sample value; other words stay as they are (names,
/// files and addresses are strings to clap).
fn sample(word: &str) -> String {
    let value = match word {
        "RUN" | "ID" | "P" => "1",
        "N" | "D" => "2",
        "S" => "100",
        "MS" | "MB" => "100",
        "ADDR" => "127.0.0.1:0",
        "ELO0,ELO1" => "0,5",
        "E0" => "0",
        "E1" => "5",
        "ROLE" => "developer",
        "LL,LD,DD,DW,WW" => "1,2,3,2,1",
        "W,D,L" | "RW,D,BW" => "1,1,1",
        _ => return word.to_owned(),
    };
    value.to_owned()
}

/// `$NAME` and `$(…)` in `line`: a block's variables by their value,
/// anything else by `1`.
fn expand(line: &str, vars: &HashMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(inner) = after.strip_prefix('(') {
            let end = inner.find(')').map_or(inner.len(), |e| e + 1);
            out.push('1');
            rest = &inner[end.min(inner.len())..];
            continue;
        }
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        match vars.get(name) {
            Some(value) => out.push_str(value),
            None if name.is_empty() => out.push('$'),
            None => out.push('1'),
        }
        rest = &after[name_len..];
    }
    out.push_str(rest);
    out
}

/// The command a line runs, if it is one of the binaries': its program and
/// arguments, the documents' shorthand read.
fn command(line: &str, vars: &HashMap<String, String>) -> Option<(&'static str, Vec<String>)> {
    let line = line.trim().trim_start_matches("$ ");
    let line = expand(&first_alternatives(without_comment(line)), vars);
    let mut all = words(&line);
    if let Some(end) = all
        .iter()
        .position(|w| matches!(w.as_str(), "|" | "&&" | ";" | "&" | ">" | "2>"))
    {
        all.truncate(end);
    }
    let (program, rest) = match all.first()?.as_str() {
        "xq-coordinator" => ("xq-coordinator", all[1..].to_vec()),
        "xq-worker" => ("xq-worker", all[1..].to_vec()),
        "cargo" if all.get(1).map(String::as_str) == Some("run") => {
            let bin = all.iter().position(|w| w == "--bin")?;
            let program = match all.get(bin + 1)?.as_str() {
                "xq-coordinator" => "xq-coordinator",
                "xq-worker" => "xq-worker",
                _ => return None,
            };
            let dashes = all.iter().position(|w| w == "--")?;
            (program, all[dashes + 1..].to_vec())
        }
        _ => return None,
    };
    // Prose that names a binary (`xq-worker ← xq-coordinator`) is no command.
    let first = rest.first()?;
    if !first.starts_with(|c: char| c.is_ascii_lowercase() || c == '-') {
        return None;
    }
    let args = rest
        .into_iter()
        .filter(|w| !matches!(w.as_str(), "…" | "..." | "\\"))
        .map(|w| {
            let w = w.trim_end_matches('…');
            if w.starts_with('-') {
                return w.to_owned();
            }
            match w.split_once('|') {
                Some((first, _)) => sample(first),
                None => sample(w),
            }
        })
        .collect();
    Some((program, args))
}

/// Every documented command of the workspace's Markdown files.
fn documented() -> Vec<Documented> {
    let root = root();
    let files = xq_tests::docs::markdown_files(&root, &["fuzz"]);
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read a document");
        let name = file
            .strip_prefix(&root)
            .unwrap_or(&file)
            .display()
            .to_string();
        for (first_line, lines) in blocks(&text) {
            let mut vars = HashMap::new();
            let mut joined = String::new();
            let mut start = first_line;
            for (i, line) in lines.iter().enumerate() {
                if joined.is_empty() {
                    start = first_line + i;
                }
                match line.trim_end().strip_suffix('\\') {
                    Some(head) => {
                        joined.push_str(head);
                        joined.push(' ');
                        continue;
                    }
                    None => joined.push_str(line),
                }
                let whole = std::mem::take(&mut joined);
                if let Some((var, value)) = whole.trim().split_once('=')
                    && !var.is_empty()
                    && var.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                {
                    vars.insert(var.to_owned(), words(value).join(" "));
                    continue;
                }
                let trimmed = whole.trim_start();
                let body = trimmed.strip_prefix("for ").map(|_| "").unwrap_or(trimmed);
                if let Some((program, args)) = command(body, &vars) {
                    out.push(Documented {
                        place: format!("{name}:{start}"),
                        program,
                        args,
                    });
                }
            }
        }
    }
    out
}

fn run(program: &str, args: &[String], dir: &Path) -> Output {
    Command::new(binary(program))
        .args(args)
        .current_dir(dir)
        .env("XQ_CONFIG_DIR", dir.join("config"))
        .env_remove("XQ_TOKEN")
        .output()
        .unwrap_or_else(|e| panic!("run {program}: {e}"))
}

/// `program args… --help`: clap's verdict on the arguments, `Err` with its
/// message when it refuses them.
fn parses(program: &str, args: &[String], dir: &Path) -> Result<(), String> {
    let mut with_help = args.to_vec();
    with_help.push("--help".to_owned());
    let out = run(program, &with_help, dir);
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

#[test]
fn every_documented_command_parses() {
    let dir = TempDir::new("docs-commands");
    let all = documented();
    assert!(
        all.len() > 100,
        "found only {} documented commands",
        all.len()
    );
    for (program, sub) in [
        ("xq-coordinator", "sprt"),
        ("xq-coordinator", "local"),
        ("xq-coordinator", "serve"),
        ("xq-worker", "work"),
        ("xq-worker", "play"),
    ] {
        assert!(
            all.iter()
                .any(|d| d.program == program && d.args.first().is_some_and(|a| a == sub)),
            "no documented `{program} {sub}`"
        );
    }
    let refused: Vec<String> = all
        .iter()
        .filter_map(|d| {
            parses(d.program, &d.args, &dir.0).err().map(|why| {
                format!(
                    "{}: {} {}\n    {}",
                    d.place,
                    d.program,
                    d.args.join(" "),
                    why.replace('\n', "\n    ")
                )
            })
        })
        .collect();
    assert!(
        refused.is_empty(),
        "{} of {} documented commands do not parse:\n{}",
        refused.len(),
        all.len(),
        refused.join("\n")
    );
}

#[test]
fn the_shorthand_is_read_and_a_renamed_flag_is_refused() {
    let vars = HashMap::from([("P".to_owned(), "--games 400 --json".to_owned())]);
    let (program, args) = command(
        "xq-coordinator report RUN [--json | --csv] [--db xq.db]   # a comment",
        &vars,
    )
    .unwrap();
    assert_eq!(program, "xq-coordinator");
    assert_eq!(args, ["report", "1", "--json", "--db", "xq.db"]);
    let (_, args) = command("xq-coordinator local spsa $P --db in-$round.db", &vars).unwrap();
    assert_eq!(args.join(" "), "local spsa --games 400 --json --db in-1.db");
    let (_, args) = command(
        "cargo run --release --bin xq-worker -- play --pairs N --rules a|b",
        &vars,
    )
    .unwrap();
    assert_eq!(args.join(" "), "play --pairs 2 --rules a");
    let (_, args) = command("xq-coordinator stats elo (--wdl W,D,L | --penta …)", &vars).unwrap();
    assert_eq!(args.join(" "), "stats elo --wdl 1,1,1");
    assert!(command("xq-worker ← xq-coordinator (local mode)", &vars).is_none());
    let dir = TempDir::new("docs-renamed");
    let renamed: Vec<String> = ["sprt", "--no-such-flag", "3"].map(String::from).into();
    let err = parses("xq-coordinator", &renamed, &dir.0).unwrap_err();
    assert!(err.contains("--no-such-flag"), "{err}");
    let bad_value: Vec<String> = ["sprt", "--elo0", "five"].map(String::from).into();
    assert!(parses("xq-coordinator", &bad_value, &dir.0).is_err());
    let old_spelling: Vec<String> = ["sprt", "--max-games", "200"].map(String::from).into();
    assert_eq!(parses("xq-coordinator", &old_spelling, &dir.0), Ok(()));
}

/// The subcommands a `--help` text lists under `Commands:`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c != "help")
        .collect()
}

#[test]
fn versions_and_help_texts_are_current() {
    let dir = TempDir::new("docs-help");
    let version = env!("CARGO_PKG_VERSION");
    for program in ["xq-coordinator", "xq-worker"] {
        let out = run(program, &["--version".to_owned()], &dir.0);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            text.lines().next(),
            Some(format!("{program} {version}").as_str())
        );
        let mut queue: Vec<Vec<String>> = vec![Vec::new()];
        let mut seen = 0;
        while let Some(path) = queue.pop() {
            let mut args = path.clone();
            args.push("--help".to_owned());
            let out = run(program, &args, &dir.0);
            let help = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(out.status.success(), "{program} {args:?}");
            for stale in ["admin token", "(or admin)"] {
                assert!(
                    !help.contains(stale),
                    "`{program} {}` says {stale:?}",
                    args.join(" ")
                );
            }
            seen += 1;
            for sub in subcommands(&help) {
                let mut next = path.clone();
                next.push(sub);
                queue.push(next);
            }
        }
        assert!(seen > 2, "{program}: {seen} help texts");
    }
    let cluster = std::fs::read_to_string(root().join("coordinator/CLUSTER.md")).unwrap();
    assert!(
        cluster.contains(&format!("(`xq-worker --version`: `xq-worker {version}`")),
        "coordinator/CLUSTER.md states another worker version than {version}"
    );
}

#[test]
fn cert_makes_its_files_and_prints_lines_that_work() {
    let dir = TempDir::new("docs-cert");
    let args: Vec<String> = ["cert", "--dir", "certs", "--name", "localhost"]
        .map(String::from)
        .into();
    let out = run("xq-coordinator", &args, &dir.0);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Vec<(&'static str, Vec<String>)> = text
        .lines()
        .filter_map(|l| command(l, &HashMap::new()))
        .collect();
    assert_eq!(printed.len(), 2, "{text}");
    for (program, args) in &printed {
        assert_eq!(parses(program, args, &dir.0), Ok(()), "{program} {args:?}");
        let value = |flag: &str| {
            args.iter()
                .position(|a| a == flag)
                .and_then(|i| args.get(i + 1))
                .cloned()
        };
        for flag in ["--tls-cert", "--tls-key", "--ca"] {
            if let Some(file) = value(flag) {
                assert!(dir.0.join(&file).is_file(), "{flag} {file}: no such file");
            }
        }
        if args[0] == "serve" {
            assert!(
                value("--db").is_some() && value("--http").is_some(),
                "{args:?}"
            );
        } else {
            assert_eq!(value("--ca").as_deref(), Some("certs/ca.pem"));
        }
    }
}

#[test]
fn make_test_release_writes_a_worker_of_another_version() {
    let dir = TempDir::new("docs-test-release");
    let args: Vec<String> = ["make-test-release", "--version", "0.1.1", "--out", "next"]
        .map(String::from)
        .into();
    let out = run("xq-worker", &args, &dir.0);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("xq-worker 0.1.1 (from "), "{text}");
    let copy = Command::new(dir.join("next"))
        .arg("--version")
        .output()
        .expect("run the copy");
    assert!(String::from_utf8_lossy(&copy.stdout).starts_with("xq-worker 0.1.1\n"));
    let bad: Vec<String> = ["make-test-release", "--version", "next", "--out", "x"]
        .map(String::from)
        .into();
    let refused = run("xq-worker", &bad, &dir.0);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("version \"next\""));
}
