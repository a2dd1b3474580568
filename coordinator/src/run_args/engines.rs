//! The players' engines of an SPRT or fixed-games run: a registered engine
//! (`--dev-engine NAME`) or one built from a git commit (`--dev-repo URL
//! --dev-ref REF --dev-build CMD --dev-binary PATH` and its signature,
//! `--dev-bench N` or `--dev-signature bench:N|depth:D:N|none`), their
//! options and their own limits; the same flags for base.

use std::collections::HashMap;

use anyhow::{Context, bail};
use clap::Args;
use xq_proto::engine_source::{BUILD_TOOLS, is_commit};
use xq_proto::{Coords, Limit, Protocol, Signature, pb};

/// External engines and per-player limits.
#[derive(Debug, Clone, Args)]
pub struct EngineArgs {
    /// Registered engine (`engine add`) playing as dev instead of the built-in engine.
    #[arg(long, conflicts_with = "dev_repo")]
    dev_engine: Option<String>,
    /// Registered engine playing as base.
    #[arg(long, conflicts_with = "base_repo")]
    base_engine: Option<String>,
    /// An option of the dev engine, `NAME=VALUE` (repeatable).
    #[arg(long = "dev-option")]
    dev_options: Vec<String>,
    /// An option of the base engine, `NAME=VALUE` (repeatable).
    #[arg(long = "base-option")]
    base_options: Vec<String>,
    /// Dev's own limit (`nodes=N`, `depth=N`, `movetime=MS`, `tc=…`), for odds.
    #[arg(long)]
    dev_limit: Option<String>,
    /// Base's own limit.
    #[arg(long)]
    base_limit: Option<String>,
    /// Build dev from this git repository (https://…; the coordinator may
    /// allow file:// and others) instead of a registered engine; needs
    /// --dev-ref, --dev-build, --dev-binary and --dev-bench or --dev-signature.
    #[arg(long, value_name = "URL")]
    dev_repo: Option<String>,
    /// The commit to build (40 hex digits), or a branch or tag, which the
    /// coordinator resolves to its commit when it creates the run.
    #[arg(long, value_name = "REF")]
    dev_ref: Option<String>,
    /// The build command, run by `sh -c` in the checkout's root with ARCH
    /// set to the worker's best instruction-set value (e.g. `make -j
    /// build ARCH=$ARCH`).
    #[arg(long, value_name = "CMD")]
    dev_build: Option<String>,
    /// The built executable's path relative to the checkout (e.g. `src/pikafish`).
    #[arg(long, value_name = "PATH")]
    dev_binary: Option<String>,
    /// The bench signature (`Nodes searched`) the build must give; workers
    /// play it only if theirs matches. Short for --dev-signature bench:N.
    #[arg(long, value_name = "N", conflicts_with = "dev_signature")]
    dev_bench: Option<u64>,
    /// What workers check the build against, declared once: `bench:N` (its
    /// bench's node count), `depth:D:N` (the nodes of a fixed search of
    /// depth D, for an engine without a bench, e.g. ElephantEye) or `none`
    /// (no check: workers' builds may differ unnoticed).
    #[arg(long, value_name = "KIND")]
    dev_signature: Option<String>,
    /// The tools the build needs besides git, comma-separated (default: the
    /// build command's first word when it is one of git, make, cc, gcc,
    /// g++, c++, clang, clang++, cargo, cmake).
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    dev_needs: Vec<String>,
    /// The protocol the built dev engine speaks.
    #[arg(long, value_name = "uci|ucci", default_value = "uci")]
    dev_protocol: String,
    /// How the built dev engine numbers ranks (0-9 or 1-10); default:
    /// detected at the handshake.
    #[arg(long, value_name = "0-9|1-10")]
    dev_coords: Option<Coords>,
    /// The built dev engine's name in reports and PGN (default:
    /// `<repository name>@<ref>`).
    #[arg(long, value_name = "NAME")]
    dev_label: Option<String>,
    /// Build base from this git repository (see --dev-repo).
    #[arg(long, value_name = "URL")]
    base_repo: Option<String>,
    /// Base's commit, branch or tag.
    #[arg(long, value_name = "REF")]
    base_ref: Option<String>,
    /// Base's build command.
    #[arg(long, value_name = "CMD")]
    base_build: Option<String>,
    /// Base's built executable, relative to the checkout.
    #[arg(long, value_name = "PATH")]
    base_binary: Option<String>,
    /// Base's bench signature.
    #[arg(long, value_name = "N", conflicts_with = "base_signature")]
    base_bench: Option<u64>,
    /// Base's signature (see --dev-signature).
    #[arg(long, value_name = "KIND")]
    base_signature: Option<String>,
    /// The tools base's build needs besides git, comma-separated.
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    base_needs: Vec<String>,
    /// The protocol the built base engine speaks.
    #[arg(long, value_name = "uci|ucci", default_value = "uci")]
    base_protocol: String,
    /// How the built base engine numbers ranks.
    #[arg(long, value_name = "0-9|1-10")]
    base_coords: Option<Coords>,
    /// The built base engine's name in reports and PGN.
    #[arg(long, value_name = "NAME")]
    base_label: Option<String>,
}

/// `NAME=VALUE` engine options.
pub(super) fn options(list: &[String]) -> anyhow::Result<HashMap<String, String>> {
    list.iter()
        .map(|o| match o.split_once('=') {
            Some((n, v)) => Ok((n.trim().to_owned(), v.trim().to_owned())),
            None => bail!("bad engine option {o:?}: expected NAME=VALUE"),
        })
        .collect()
}

/// One player's source flags, by reference.
struct SourceFlags<'a> {
    side: &'static str,
    repo: &'a Option<String>,
    git_ref: &'a Option<String>,
    build: &'a Option<String>,
    binary: &'a Option<String>,
    bench: Option<u64>,
    signature: &'a Option<String>,
    needs: &'a [String],
    protocol: &'a str,
    coords: Option<Coords>,
    label: &'a Option<String>,
}

impl SourceFlags<'_> {
    /// The source engine these flags name (`None` when none of the source
    /// flags is given), as a request to create a run carries it; the
    /// coordinator checks its rules.
    fn engine(&self) -> anyhow::Result<Option<pb::EngineRef>> {
        let side = self.side;
        let given = [
            self.repo,
            self.git_ref,
            self.build,
            self.binary,
            self.label,
            self.signature,
        ]
        .iter()
        .any(|f| f.is_some())
            || self.bench.is_some()
            || !self.needs.is_empty()
            || self.coords.is_some();
        if !given {
            return Ok(None);
        }
        let need = |v: &Option<String>, flag: &str| -> anyhow::Result<String> {
            v.clone().with_context(|| {
                format!(
                    "a {side} engine built from source needs --{side}-repo, --{side}-ref, \
                     --{side}-build, --{side}-binary and --{side}-bench or --{side}-signature; \
                     --{side}-{flag} is missing"
                )
            })
        };
        let repo = need(self.repo, "repo")?;
        let git_ref = need(self.git_ref, "ref")?;
        let build = need(self.build, "build")?;
        let binary = need(self.binary, "binary")?;
        let signature = match (self.bench, self.signature) {
            (Some(n), _) => Some(Signature::Bench(n)),
            (None, Some(text)) => {
                Signature::parse(text).with_context(|| format!("--{side}-signature"))?
            }
            (None, None) => bail!(
                "--{side}-bench or --{side}-signature: declare what workers check the build \
                 against (bench:N, depth:D:N or none)"
            ),
        };
        let (signature, signature_depth) = Signature::to_wire(signature);
        let protocol = Protocol::parse(self.protocol)
            .with_context(|| format!("--{side}-protocol {:?}: uci or ucci", self.protocol))?;
        if let Some(unknown) = self
            .needs
            .iter()
            .find(|t| !BUILD_TOOLS.contains(&t.as_str()))
        {
            bail!(
                "--{side}-needs {unknown:?}: a worker reports only {}",
                BUILD_TOOLS.join(", ")
            );
        }
        let (commit, git_ref) = if is_commit(&git_ref.to_ascii_lowercase()) {
            (git_ref.to_ascii_lowercase(), String::new())
        } else {
            (String::new(), git_ref)
        };
        let name = match self.label {
            Some(label) => label.clone(),
            None => default_label(
                &repo,
                if git_ref.is_empty() {
                    &commit
                } else {
                    &git_ref
                },
            ),
        };
        let coords = match self.coords {
            None => pb::EngineCoords::Unspecified,
            Some(Coords::FromZero) => pb::EngineCoords::Ranks09,
            Some(Coords::FromOne) => pb::EngineCoords::Ranks110,
        };
        Ok(Some(pb::EngineRef {
            name,
            signature,
            signature_depth,
            protocol: pb::EngineProtocol::from(protocol).into(),
            coords: coords.into(),
            source: Some(pb::EngineSource {
                repo,
                commit,
                git_ref,
                build,
                binary,
                needs: self.needs.to_vec(),
            }),
            ..Default::default()
        }))
    }
}

/// `<repository name>@<ref>` (a commit: its first 12 digits), at most 64
/// characters: the name a source engine has in reports and PGN unless one
/// is given.
fn default_label(repo: &str, git_ref: &str) -> String {
    let base = repo
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(repo);
    let base = base.strip_suffix(".git").unwrap_or(base);
    let git_ref = if is_commit(git_ref) {
        &git_ref[..12]
    } else {
        git_ref
    };
    format!("{base}@{git_ref}").chars().take(64).collect()
}

impl EngineArgs {
    /// The wire form; `None` when every flag is unset.
    pub(super) fn choice(&self) -> anyhow::Result<Option<pb::EngineChoice>> {
        let limit = |l: &Option<String>| -> anyhow::Result<Option<pb::Limit>> {
            let Some(text) = l else { return Ok(None) };
            Ok(Some(text.parse::<Limit>()?.into()))
        };
        let dev_source = SourceFlags {
            side: "dev",
            repo: &self.dev_repo,
            git_ref: &self.dev_ref,
            build: &self.dev_build,
            binary: &self.dev_binary,
            bench: self.dev_bench,
            signature: &self.dev_signature,
            needs: &self.dev_needs,
            protocol: &self.dev_protocol,
            coords: self.dev_coords,
            label: &self.dev_label,
        }
        .engine()?;
        let base_source = SourceFlags {
            side: "base",
            repo: &self.base_repo,
            git_ref: &self.base_ref,
            build: &self.base_build,
            binary: &self.base_binary,
            bench: self.base_bench,
            signature: &self.base_signature,
            needs: &self.base_needs,
            protocol: &self.base_protocol,
            coords: self.base_coords,
            label: &self.base_label,
        }
        .engine()?;
        let choice = pb::EngineChoice {
            dev_engine: self.dev_engine.clone().unwrap_or_default(),
            base_engine: self.base_engine.clone().unwrap_or_default(),
            dev_options: options(&self.dev_options)?,
            base_options: options(&self.base_options)?,
            dev_limit: limit(&self.dev_limit)?,
            base_limit: limit(&self.base_limit)?,
            dev_source,
            base_source,
        };
        Ok((choice != pb::EngineChoice::default()).then_some(choice))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Flags {
        #[command(flatten)]
        e: EngineArgs,
    }

    fn choice(args: &[&str]) -> anyhow::Result<Option<pb::EngineChoice>> {
        Flags::try_parse_from(std::iter::once("t").chain(args.iter().copied()))?
            .e
            .choice()
    }

    const SOURCE: [&str; 10] = [
        "--dev-repo",
        "https://example.org/xq/engine.git",
        "--dev-ref",
        "main",
        "--dev-build",
        "make -j2 ARCH=$ARCH",
        "--dev-binary",
        "src/engine",
        "--dev-bench",
        "123456",
    ];

    #[test]
    fn source_flags_build_a_source_engine_named_after_its_repo_and_ref() {
        let c = choice(&SOURCE).unwrap().unwrap();
        let dev = c.dev_source.expect("a dev source");
        assert_eq!(dev.name, "engine@main");
        assert_eq!((dev.signature, dev.signature_depth), (Some(123_456), 0));
        for (declared, wire) in [
            ("depth:6:140456", (Some(140_456), 6)),
            ("none", (None, 0)),
            ("bench:9", (Some(9), 0)),
        ] {
            let mut args = SOURCE[..8].to_vec();
            args.extend(["--dev-signature", declared]);
            let dev = choice(&args).unwrap().unwrap().dev_source.unwrap();
            assert_eq!((dev.signature, dev.signature_depth), wire, "{declared}");
        }
        let source = dev.source.unwrap();
        assert_eq!(
            (source.commit.as_str(), source.git_ref.as_str()),
            ("", "main")
        );
        assert_eq!(source.build, "make -j2 ARCH=$ARCH");
        assert!(c.base_source.is_none() && c.dev_engine.is_empty());
        let engine = xq_proto::EngineRef::source_request(
            choice(&SOURCE).unwrap().unwrap().dev_source.unwrap(),
        )
        .unwrap();
        assert_eq!(engine.protocol, Protocol::Uci);
    }

    #[test]
    fn a_full_commit_is_taken_as_the_commit_and_any_case_is_lowered() {
        let mut args = SOURCE.to_vec();
        args[3] = "0123456789ABCDEF0123456789abcdef01234567";
        args.extend(["--dev-needs", "make,g++", "--dev-coords", "1-10"]);
        let dev = choice(&args).unwrap().unwrap().dev_source.unwrap();
        assert_eq!(dev.name, "engine@0123456789ab");
        assert_eq!(dev.coords(), pb::EngineCoords::Ranks110);
        let source = dev.source.unwrap();
        assert_eq!(source.commit, "0123456789abcdef0123456789abcdef01234567");
        assert!(source.git_ref.is_empty());
        assert_eq!(source.needs, ["make", "g++"]);
    }

    #[test]
    fn an_incomplete_or_doubled_source_is_refused_naming_the_flag() {
        let err = choice(&SOURCE[..8]).unwrap_err().to_string();
        assert!(err.contains("--dev-bench or --dev-signature"), "{err}");
        let mut args = SOURCE[..8].to_vec();
        args.extend(["--dev-signature", "depth:0:5"]);
        let err = format!("{:#}", choice(&args).unwrap_err());
        assert!(
            err.contains("--dev-signature") && err.contains("depth:0:5"),
            "{err}"
        );
        let mut args = SOURCE.to_vec();
        args.extend(["--dev-signature", "none"]);
        let err = choice(&args).unwrap_err().to_string();
        assert!(err.contains("cannot be used with"), "{err}");
        let err = choice(&["--base-repo", "https://x/y"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--base-ref is missing"), "{err}");
        let mut args = SOURCE.to_vec();
        args.extend(["--dev-engine", "pika"]);
        let err = choice(&args).unwrap_err().to_string();
        assert!(err.contains("cannot be used with"), "{err}");
        let mut args = SOURCE.to_vec();
        args.extend(["--dev-needs", "rm"]);
        let err = choice(&args).unwrap_err().to_string();
        assert!(err.contains("\"rm\""), "{err}");
        assert!(choice(&[]).unwrap().is_none());
    }

    #[test]
    fn a_default_label_is_the_repositorys_name_and_the_ref() {
        assert_eq!(
            default_label("file:///tmp/src/", "feature/x"),
            "src@feature/x"
        );
        assert_eq!(default_label("https://h/a/pika.git", "v1"), "pika@v1");
        assert_eq!(
            default_label("https://h/e", &"r".repeat(100))
                .chars()
                .count(),
            64
        );
    }
}
