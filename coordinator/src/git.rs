//! The coordinator's one use of git: when a run is created, a source
//! engine named by a branch or tag is resolved to the commit it names with
//! `git ls-remote`, so the run's spec (and every worker) has one commit.
//! The coordinator never fetches, builds or runs a source.
//!
//! git runs with a time limit, without a terminal to prompt on
//! (`GIT_TERMINAL_PROMPT=0`, ssh in batch mode) and with the transports the
//! coordinator allows (`GIT_ALLOW_PROTOCOL`, from `serve --git-protocols`;
//! https only by default).

use std::process::Stdio;
use std::time::Duration;

use xq_proto::engine_source::{REPO_SCHEMES, is_commit};

/// The URL schemes (git transports) runs may name, a subset of
/// [`REPO_SCHEMES`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct GitProtocols(u8);

impl std::fmt::Debug for GitProtocols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.names().join(","))
    }
}

impl Default for GitProtocols {
    /// https only.
    fn default() -> Self {
        GitProtocols::parse("https").unwrap_or(GitProtocols(1))
    }
}

impl GitProtocols {
    /// The schemes of a comma-separated list (`https,file`); an unknown or
    /// empty one is refused, naming it.
    pub fn parse(list: &str) -> Result<GitProtocols, String> {
        let mut bits = 0u8;
        for name in list.split(',').map(str::trim) {
            let i = REPO_SCHEMES
                .iter()
                .position(|s| *s == name)
                .ok_or_else(|| {
                    format!(
                        "unknown git protocol {}: one of {}",
                        xq_proto::quote(name),
                        REPO_SCHEMES.join(", ")
                    )
                })?;
            bits |= 1 << i;
        }
        Ok(GitProtocols(bits))
    }

    /// Whether runs may name repositories of `scheme`.
    pub fn allows(self, scheme: &str) -> bool {
        REPO_SCHEMES
            .iter()
            .position(|s| *s == scheme)
            .is_some_and(|i| self.0 & (1 << i) != 0)
    }

    /// The allowed schemes, in [`REPO_SCHEMES`]' order.
    pub fn names(self) -> Vec<&'static str> {
        REPO_SCHEMES
            .iter()
            .enumerate()
            .filter(|(i, _)| self.0 & (1 << i) != 0)
            .map(|(_, s)| *s)
            .collect()
    }
}

/// How the coordinator runs git.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GitConfig {
    pub protocols: GitProtocols,
    /// Longest `git ls-remote` (the run is refused when it takes longer).
    pub timeout: Duration,
}

impl Default for GitConfig {
    /// https only, 30 s.
    fn default() -> Self {
        GitConfig {
            protocols: GitProtocols::default(),
            timeout: Duration::from_secs(30),
        }
    }
}

/// Why a branch or tag was not resolved.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("cannot run git: {0}")]
    Spawn(std::io::Error),
    #[error("git ls-remote {repo} took longer than {} s", .timeout.as_secs())]
    Timeout { repo: String, timeout: Duration },
    #[error("git ls-remote {repo} failed: {message}")]
    Failed { repo: String, message: String },
    #[error("{repo} has no branch or tag named {}", xq_proto::quote(.git_ref))]
    NoSuchRef { repo: String, git_ref: String },
}

/// The commit `git_ref` (a branch, a tag, or a full ref such as `HEAD`)
/// names in the repository `repo` (whose scheme the caller has checked
/// against `config.protocols`).
pub async fn resolve(repo: &str, git_ref: &str, config: GitConfig) -> Result<String, ResolveError> {
    let mut command = tokio::process::Command::new("git");
    command
        .args(["ls-remote", "--", repo, git_ref, &format!("{git_ref}^{{}}")])
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ALLOW_PROTOCOL", config.protocols.names().join(":"))
        .env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = command.spawn().map_err(ResolveError::Spawn)?;
    let output = tokio::time::timeout(config.timeout, child.wait_with_output())
        .await
        .map_err(|_| ResolveError::Timeout {
            repo: repo.to_owned(),
            timeout: config.timeout,
        })?
        .map_err(ResolveError::Spawn)?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let message = stderr
            .lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty())
            .unwrap_or("no message")
            .to_owned();
        return Err(ResolveError::Failed {
            repo: repo.to_owned(),
            message: xq_proto::bounded(format!("{message} ({})", output.status)),
        });
    }
    pick_commit(&String::from_utf8_lossy(&output.stdout), git_ref).ok_or_else(|| {
        ResolveError::NoSuchRef {
            repo: repo.to_owned(),
            git_ref: git_ref.to_owned(),
        }
    })
}

/// The commit `git_ref` names in `git ls-remote`'s output (`<id>\t<ref>`
/// lines): the branch `refs/heads/<ref>`, else the tag's commit
/// (`refs/tags/<ref>^{}`, an annotated tag peeled, or `refs/tags/<ref>`),
/// else a ref of exactly that name (`HEAD`, `refs/heads/x`).
pub fn pick_commit(ls_remote: &str, git_ref: &str) -> Option<String> {
    let lines: Vec<(&str, &str)> = ls_remote
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .filter(|(id, _)| is_commit(id))
        .collect();
    let find = |name: &str| {
        lines
            .iter()
            .find(|(_, r)| *r == name)
            .map(|(id, _)| (*id).to_owned())
    };
    find(&format!("refs/heads/{git_ref}"))
        .or_else(|| find(&format!("refs/tags/{git_ref}^{{}}")))
        .or_else(|| find(&format!("refs/tags/{git_ref}")))
        .or_else(|| find(git_ref))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";
    const C: &str = "3333333333333333333333333333333333333333";

    #[test]
    fn a_branch_wins_then_a_peeled_tag_then_an_exact_ref() {
        let out =
            format!("{A}\trefs/remotes/origin/main\n{B}\trefs/heads/main\n{C}\trefs/tags/main\n");
        assert_eq!(pick_commit(&out, "main").as_deref(), Some(B));
        let tags = format!("{A}\trefs/tags/v1\n{B}\trefs/tags/v1^{{}}\n");
        assert_eq!(pick_commit(&tags, "v1").as_deref(), Some(B), "peeled");
        let light = format!("{C}\trefs/tags/light\n");
        assert_eq!(pick_commit(&light, "light").as_deref(), Some(C));
        let head = format!("{A}\tHEAD\n{B}\trefs/heads/master\n");
        assert_eq!(pick_commit(&head, "HEAD").as_deref(), Some(A));
        assert_eq!(pick_commit(&head, "refs/heads/master").as_deref(), Some(B));
    }

    #[test]
    fn a_suffix_match_or_garbage_names_no_commit() {
        let out = format!("{A}\trefs/heads/feature/main\nnot a line\nzz\trefs/heads/x\n");
        assert_eq!(pick_commit(&out, "main"), None);
        assert_eq!(pick_commit(&out, "x"), None);
        assert_eq!(pick_commit("", "main"), None);
    }

    #[test]
    fn protocols_parse_from_a_list_and_refuse_unknown_names() {
        let p = GitProtocols::parse("https, file").unwrap();
        assert!(p.allows("https") && p.allows("file") && !p.allows("ssh"));
        assert_eq!(p.names(), ["https", "file"]);
        assert_eq!(GitProtocols::default().names(), ["https"]);
        let e = GitProtocols::parse("https,ext").unwrap_err();
        assert!(e.contains("\"ext\""), "{e}");
        assert!(GitProtocols::parse("").is_err());
        assert!(!GitProtocols::default().allows("ext"));
    }
}
