//! Engines built from source: a git commit and how to build an engine from
//! it ([`EngineSource`]), the build tools a worker reports
//! ([`BUILD_TOOLS`]), and the tail of a failed build's log ([`log_tail`]).
//!
//! The rules a source read from the wire must pass are in
//! [`crate::validate`]; the name checks they use are here.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The tools a worker may report at registration and a source may need, by
/// the name of their executable on `PATH`.
pub const BUILD_TOOLS: [&str; 10] = [
    "git", "make", "cc", "gcc", "g++", "c++", "clang", "clang++", "cargo", "cmake",
];

/// The URL schemes a repository may have; a coordinator allows a subset
/// (`serve --git-protocols`).
pub const REPO_SCHEMES: [&str; 5] = ["https", "http", "ssh", "git", "file"];

/// Longest repository URL, in bytes.
pub const MAX_REPO_BYTES: usize = 512;
/// Longest branch or tag name, in bytes (git's own limit for a ref's name).
pub const MAX_REF_BYTES: usize = 255;
/// Longest build command, in bytes.
pub const MAX_BUILD_BYTES: usize = 1024;
/// Longest path of the built executable, in bytes.
pub const MAX_BINARY_BYTES: usize = 255;
/// Longest log tail a failed build reports, in bytes.
pub const MAX_LOG_TAIL_BYTES: usize = 8192;
/// Longest one-line reason of a failed build, in bytes.
pub const MAX_BUILD_REASON_BYTES: usize = 256;

/// A git commit and how to build an engine from it.
///
/// Invariants (checked on the wire): `repo` is a URL of one of
/// [`REPO_SCHEMES`]; `commit` is 40 lowercase hex digits, except in a request
/// to create a run, where it may be empty when `git_ref` names what to
/// resolve; `build` and `binary` are bounded, `binary` relative without
/// `..`; `needs` names [`BUILD_TOOLS`], each once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineSource {
    pub repo: String,
    /// The commit the worker builds (see the type's invariants).
    pub commit: String,
    /// The branch or tag the commit was resolved from, for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
    /// Run as `sh -c <build>` in the checkout's root, with `ARCH` set.
    pub build: String,
    /// The built executable, relative to the checkout's root.
    pub binary: String,
    /// Tools the build needs besides `git`; empty: see [`EngineSource::tools`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needs: Vec<String>,
}

impl EngineSource {
    /// The repository URL's scheme (`https`, `file`, …): the text before `://`.
    pub fn scheme(&self) -> &str {
        self.repo.split_once("://").map_or("", |(s, _)| s)
    }

    /// Whether `commit` is a full commit id (a run's spec and its leases
    /// hold only such sources).
    pub fn is_resolved(&self) -> bool {
        is_commit(&self.commit)
    }

    /// Every tool a worker needs to build it: `git`, and `needs`, or when
    /// that is empty the build command's first word if it is one of
    /// [`BUILD_TOOLS`].
    pub fn tools(&self) -> BTreeSet<&str> {
        let mut tools = BTreeSet::from(["git"]);
        if self.needs.is_empty() {
            let first = self.build.split_whitespace().next().unwrap_or("");
            tools.extend(BUILD_TOOLS.iter().copied().filter(|t| *t == first));
        } else {
            tools.extend(self.needs.iter().map(String::as_str));
        }
        tools
    }

    /// `repo@commit` (the commit's first 12 digits), with the branch or tag
    /// in parentheses when there is one: how pages and reports name it.
    pub fn label(&self) -> String {
        let short = &self.commit[..self.commit.len().min(12)];
        match &self.git_ref {
            Some(r) => format!("{}@{short} ({r})", self.repo),
            None => format!("{}@{short}", self.repo),
        }
    }
}

/// A source engine's build that failed on a worker, as it reports it
/// (`ReportBuildFailure`).
///
/// Invariants (checked on the wire, [`FailedBuild::validate`]): `commit` is a
/// full commit id; `reason` one line of 1 to [`MAX_BUILD_REASON_BYTES`] bytes;
/// `log_tail` at most [`MAX_LOG_TAIL_BYTES`] bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedBuild {
    /// The commit that did not build.
    pub commit: String,
    /// What failed (`build command exited with status 2`, ...).
    pub reason: String,
    /// The end of the build's output ([`log_tail`]).
    pub log_tail: String,
}

/// Whether `s` is a full commit id: 40 lowercase hex digits.
pub fn is_commit(s: &str) -> bool {
    s.len() == 40
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Whether `s` is a branch or tag name git accepts (`git check-ref-format`'s
/// rules), that no command line could take for an option: 1 to
/// [`MAX_REF_BYTES`] bytes, no control characters, space or any of
/// `~^:?*[\`, not starting with `-` or `/`, not ending with `/` or `.`, no
/// `..`, `//` or `@{`, not `@`, and no component that starts with `.` or
/// ends with `.lock`.
pub fn is_ref_name(s: &str) -> bool {
    let bad_char = |c: char| c.is_control() || " ~^:?*[\\".contains(c);
    !(s.is_empty()
        || s.len() > MAX_REF_BYTES
        || s == "@"
        || s.chars().any(bad_char)
        || s.starts_with(['-', '/'])
        || s.ends_with(['/', '.'])
        || s.contains("..")
        || s.contains("//")
        || s.contains("@{")
        || s.split('/')
            .any(|c| c.starts_with('.') || c.ends_with(".lock")))
}

/// Whether `name` is one of [`BUILD_TOOLS`].
pub fn is_build_tool(name: &str) -> bool {
    BUILD_TOOLS.contains(&name)
}

/// The last at most `max` bytes of a build's output as text: cut at a
/// character boundary (a character cut in two is left out, bytes that are
/// not UTF-8 become U+FFFD), so the result is valid UTF-8 of at most `max`
/// bytes.
pub fn log_tail(output: &[u8], max: usize) -> String {
    let mut start = output.len().saturating_sub(max);
    // Continuation bytes of a character whose start was cut off.
    let mut skipped = 0;
    while start < output.len() && skipped < 3 && output[start] & 0xC0 == 0x80 {
        start += 1;
        skipped += 1;
    }
    let mut text = String::from_utf8_lossy(&output[start..]).into_owned();
    // Replacement characters take 3 bytes where a bad byte took 1.
    while text.len() > max {
        let mut cut = text.len() - max;
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        text.drain(..cut);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn source(build: &str, needs: &[&str]) -> EngineSource {
        EngineSource {
            repo: "https://example.org/engine.git".to_owned(),
            commit: "0123456789abcdef0123456789abcdef01234567".to_owned(),
            git_ref: Some("main".to_owned()),
            build: build.to_owned(),
            binary: "src/engine".to_owned(),
            needs: needs.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn branch_and_tag_names_follow_gits_rules() {
        for good in ["main", "feature/nnue-v2", "v1.2", "release-2024.1", "a@b"] {
            assert!(is_ref_name(good), "{good}");
        }
        for bad in [
            "",
            "-upload-pack=evil",
            "/main",
            "main/",
            "main.",
            "a..b",
            "a//b",
            "a b",
            "a:b",
            "a~1",
            "a^",
            "a?",
            "a*",
            "a[b",
            "a\\b",
            "a\nb",
            "a@{1}",
            "@",
            ".hidden",
            "x/.hidden",
            "x.lock",
            "x.lock/y",
        ] {
            assert!(!is_ref_name(bad), "{bad:?}");
        }
        assert!(is_ref_name(&"r".repeat(MAX_REF_BYTES)));
        assert!(!is_ref_name(&"r".repeat(MAX_REF_BYTES + 1)));
    }

    #[test]
    fn a_commit_is_forty_lowercase_hex_digits() {
        assert!(is_commit("0123456789abcdef0123456789abcdef01234567"));
        assert!(!is_commit("0123456789ABCDEF0123456789abcdef01234567"));
        assert!(!is_commit("0123456789abcdef0123456789abcdef0123456"));
        assert!(!is_commit("main"));
    }

    #[test]
    fn the_tools_a_build_needs_default_to_its_commands_first_word() {
        fn tools(s: &EngineSource) -> Vec<&str> {
            s.tools().into_iter().collect()
        }
        assert_eq!(tools(&source("make -j2 build", &[])), ["git", "make"]);
        assert_eq!(
            tools(&source("cargo build --release", &[])),
            ["cargo", "git"]
        );
        assert_eq!(tools(&source("./build.sh", &[])), ["git"]);
        assert_eq!(
            tools(&source("./build.sh", &["make", "g++"])),
            ["g++", "git", "make"]
        );
    }

    #[test]
    fn a_source_is_labelled_by_repo_and_short_commit() {
        assert_eq!(
            source("make", &[]).label(),
            "https://example.org/engine.git@0123456789ab (main)"
        );
        assert_eq!(source("make", &[]).scheme(), "https");
    }

    #[test]
    fn a_log_tail_is_cut_at_a_character_boundary() {
        assert_eq!(log_tail(b"short", 8192), "short");
        assert_eq!(log_tail(b"0123456789", 4), "6789");
        // "é" is 2 bytes: cutting 5 bytes of "aéé" would split the first é.
        let text = "aéé".as_bytes();
        assert_eq!(log_tail(text, 3), "é");
        assert_eq!(log_tail("炮炮".as_bytes(), 4), "炮");
        assert_eq!(log_tail("炮炮".as_bytes(), 2), "");
        // Bytes that are not UTF-8 become replacement characters, within the bound.
        let garbage = [b'x', 0xFF, 0xFE, b'y'];
        assert_eq!(log_tail(&garbage, 100), "x\u{FFFD}\u{FFFD}y");
        assert!(log_tail(&garbage, 4).len() <= 4);
    }

    proptest! {
        #[test]
        fn a_log_tail_is_valid_utf8_within_its_bound_and_a_suffix_of_valid_text(
            text in "\\PC{0,200}",
            garbage in proptest::collection::vec(any::<u8>(), 0..64),
            max in 0usize..300,
        ) {
            let tail = log_tail(text.as_bytes(), max);
            prop_assert!(tail.len() <= max);
            prop_assert!(text.ends_with(&tail));
            if text.len() <= max {
                prop_assert_eq!(&tail, &text);
            } else {
                prop_assert!(tail.len() + 3 >= max, "{} bytes kept of {max}", tail.len());
            }
            let mixed: Vec<u8> = garbage.iter().chain(text.as_bytes()).copied().collect();
            prop_assert!(log_tail(&mixed, max).len() <= max);
        }
    }
}
