//! The arguments of a new run and the one builder that turns them into a
//! `pb::RunSpec`: the CLI's run commands (`sprt`, `spsa`, `games`,
//! `variants`, `datagen`, `local …`) parse them from their flags, and the web view's
//! form from its fields ([`RunArgs::from_fields`], each field named as its
//! flag), so both build and check a spec the same way. The spec then goes
//! through the same wire-to-domain validation ([`crate::convert`]) and
//! [`crate::service::Runs::create`].
//!
//! Files that flags name (parameter files, an opening file) are read through
//! [`Files`]: the CLI reads its disk ([`Disk`]), the web form the texts
//! pasted into it ([`Pasted`]).

mod datagen;
mod engines;
mod games;
pub mod params;
mod size;
mod sprt;
mod spsa;
mod variants;

pub use datagen::DatagenRunArgs;
pub use engines::EngineArgs;
use engines::options;
pub use games::GamesRunArgs;
pub use size::Size;
pub use sprt::{ModelArg, SprtRunArgs};
pub use spsa::SpsaRunArgs;
pub use variants::VariantsRunArgs;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Args, CommandFactory, FromArgMatches, Parser, ValueEnum};
use xq_proto::cli::{AdjudicationArgs, LimitArgs, OpeningArgs};
use xq_proto::{Limit, OpeningSource, Retention, pb};

use crate::runs::RunKind;

/// Where the files that flags name are read from.
pub trait Files {
    /// The text of the file `path`.
    fn read(&self, path: &Path) -> std::io::Result<String>;
}

/// The local filesystem.
#[derive(Debug, Clone, Copy, Default)]
pub struct Disk;

impl Files for Disk {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        std::fs::read_to_string(path)
    }
}

/// Texts pasted into a form, by the file name their field stands for; any
/// other file is refused (a form never reads the server's disk).
#[derive(Debug, Clone, Default)]
pub struct Pasted(pub HashMap<PathBuf, String>);

impl Files for Pasted {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        self.0.get(path).cloned().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the web form reads no files on the server: paste the file's text",
            )
        })
    }
}

/// How games are played.
#[derive(Debug, Clone, Args)]
pub struct MatchArgs {
    #[command(flatten)]
    limit: LimitArgs,
    /// Transposition table per engine, MiB (external engines: their `Hash`,
    /// or UCCI `hashsize`, option). A worker plays only as many games at once
    /// as its memory holds at both players' hash plus a margin.
    #[arg(long, default_value_t = 16)]
    hash: u32,
    /// Search threads per engine (UCI `Threads`; the built-in engine's lazy
    /// SMP), for multi-threaded tests; a worker plays as many games at once as
    /// its cores hold at this many per game.
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(xq_proto::capacity::MAX_ENGINE_THREADS)))]
    engine_threads: u32,
    /// Rule set preset, e.g. standard or standard+conversion (variants runs:
    /// a comma-separated list, e.g. standard,conversion,repetition-4+conversion).
    #[arg(long, default_value = "standard")]
    rules: String,
    /// Whether engines value a draw by the rule set's scoring (under
    /// reform-2007: −120 cp for Red); off: draws are worth 0 to both.
    #[arg(long, value_enum, default_value = "on")]
    draw_contempt: OnOff,
    #[command(flatten)]
    openings: OpeningArgs,
    /// An opening book in the registry instead of --openings: `asset:SHA256`,
    /// or a FILE, sent as its SHA-256 (the coordinator must hold it: add it
    /// with `xq-coordinator asset add FILE`). Leases then carry the hash, not
    /// the lines; workers download and cache the book once.
    #[arg(long, value_name = "asset:SHA256|FILE")]
    book: Option<String>,
    /// Opening seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Game pairs per lease (0 = the kind's default: 8; spsa: the pairs each
    /// θ+/θ− perturbation plays, 4, OpenBench's "pairs per point").
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        alias = "pairs-per-iteration"
    )]
    batch_pairs: u32,
    /// Higher runs get workers first.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    priority: i32,
    /// Run label (defaults to the kind).
    #[arg(long)]
    name: Option<String>,
    #[command(flatten)]
    adjudication: AdjudicationArgs,
    /// Exclude workers whose residual passes the exclusion bound (stricter
    /// than the flag: Φ⁻¹(1 − 1e-6 / workers), at least 50 pairs) or whose
    /// crash and time-loss rates flag them: their results are kept but no
    /// longer counted and the run is recounted without them (not for spsa:
    /// applied results cannot be taken back).
    #[arg(long)]
    exclude_flagged: bool,
    /// Timed runs: scale each worker's time limits by N / the worker's bench
    /// nodes per second.
    #[arg(long, value_name = "N", conflicts_with = "refuse_below_nps")]
    scale_to_nps: Option<u64>,
    /// Timed runs: no work for workers whose bench is slower than N nodes per
    /// second (or that did not measure it).
    #[arg(long, value_name = "N")]
    refuse_below_nps: Option<u64>,
    /// Instruction-set flags a worker's machine must have to get this run's
    /// work, comma-separated, e.g. `avx2,bmi2` (fishtest's arch filter; the
    /// names are xq-worker's: sse3, ssse3, sse41, sse42, popcnt, avx, avx2,
    /// bmi1, bmi2, fma, avx512, vnni, avxvnni, avx512icl, neon, dotprod).
    /// Workers that did not report their machine get none.
    #[arg(long, value_name = "FLAGS", value_delimiter = ',')]
    require_flags: Vec<String>,
    /// Which counted games the archive stores: all, decisive, failures (time
    /// losses, crashes, illegal moves and disputable chase rulings) or none.
    /// Every game is still checked against the counts.
    #[arg(long, default_value = "all")]
    keep_games: Retention,
}

impl MatchArgs {
    fn limit(&self) -> anyhow::Result<Limit> {
        match self.limit.limit()? {
            Some(l) => Ok(l),
            None => bail!("give a search limit: --nodes, --depth, --movetime or --tc"),
        }
    }

    /// `--book` when given, else `--openings`; files are read through `files`.
    fn opening_source(&self, files: &dyn Files) -> anyhow::Result<OpeningSource> {
        let Some(book) = &self.book else {
            return Ok(self
                .openings
                .source_with(|path| files.read(Path::new(path)))?);
        };
        let sha256 = match xq_proto::blob::asset_reference(book) {
            Some(sha) if xq_proto::is_sha256_hex(sha) => sha.to_owned(),
            Some(other) => bail!(
                "--book asset:{other}: name a book by its SHA-256 (`xq-coordinator asset list` \
                 shows it) or give its file"
            ),
            None if Path::new(book)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("pgn")) =>
            {
                bail!(
                    "--book {book}: a PGN file holds games, not a book; store its book with \
                     `xq-coordinator asset add {book} [--plies N]` and give the asset:SHA256 it \
                     prints (or make one with `xq-coordinator book make`)"
                )
            }
            None => {
                let text = files
                    .read(Path::new(book))
                    .with_context(|| format!("cannot read the opening book {book}"))?;
                xq_proto::blob::sha256_of_reader(text.as_bytes())
                    .with_context(|| format!("cannot read the opening book {book}"))?
                    .0
            }
        };
        Ok(self.openings.after_lines(OpeningSource::Book {
            sha256,
            random_plies: 0,
        }))
    }

    /// The spec with this kind.
    fn spec(
        &self,
        kind: pb::run_spec::Kind,
        default_name: &str,
        files: &dyn Files,
    ) -> anyhow::Result<pb::RunSpec> {
        Ok(pb::RunSpec {
            name: self.name.clone().unwrap_or_else(|| default_name.to_owned()),
            priority: self.priority,
            batch_pairs: self.batch_pairs,
            settings: Some(pb::MatchSettings {
                limit: Some(self.limit()?.into()),
                hash_mb: self.hash,
                threads: self.engine_threads,
                rules: self.rules.clone(),
                openings: Some(self.opening_source(files)?.into()),
                seed: self.seed,
                adjudication: Some(self.adjudication.adjudication().into()),
                draw_contempt: self.draw_contempt == OnOff::On,
            }),
            kind: Some(kind),
            workers: Some(pb::WorkerPolicy {
                exclude_flagged: self.exclude_flagged,
                scale_to_nps: self.scale_to_nps.unwrap_or(0),
                refuse_below_nps: self.refuse_below_nps.unwrap_or(0),
                require_flags: self
                    .require_flags
                    .iter()
                    .map(|f| f.trim().to_owned())
                    .filter(|f| !f.is_empty())
                    .collect(),
            }),
            keep_games: pb::GameRetention::from(self.keep_games).into(),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

/// Which run to create: the run commands as one parser, for
/// [`RunArgs::from_fields`].
#[derive(Debug, Clone, Parser)]
#[command(name = "run", no_binary_name = true, disable_help_subcommand = true)]
pub enum RunArgs {
    Sprt(SprtRunArgs),
    Spsa(SpsaRunArgs),
    Games(GamesRunArgs),
    Variants(VariantsRunArgs),
    Datagen(DatagenRunArgs),
}

/// Why a form's fields are not a run's arguments.
#[derive(Debug, thiserror::Error)]
pub enum FieldsError {
    #[error("unknown run kind {0:?} (one of sprt, spsa, games, variants, datagen)")]
    Kind(String),
    #[error("unknown field {field:?} for a {kind} run")]
    Field { kind: String, field: String },
    /// clap's own message, as the command line shows it.
    #[error("{0}")]
    Flags(String),
}

impl RunArgs {
    /// The arguments of a `kind` run from `fields`, each named as its flag
    /// without the dashes (`elo0`, `dev-engine`, `nodes`; an old spelling
    /// the flag keeps as an alias too) and parsed by the
    /// same clap definitions as the command line. Empty values are left
    /// out; a switch is set by `on` or `true`; a repeatable flag takes one
    /// value per line.
    pub fn from_fields(kind: &str, fields: &[(String, String)]) -> Result<RunArgs, FieldsError> {
        let command = RunArgs::command();
        let sub = command
            .find_subcommand(kind)
            .ok_or_else(|| FieldsError::Kind(kind.to_owned()))?;
        let mut argv = vec![kind.to_owned()];
        for (name, value) in fields {
            let value = value.trim();
            if value.is_empty() {
                continue;
            }
            let arg = sub
                .get_arguments()
                .find(|a| {
                    a.get_long() == Some(name.as_str())
                        || a.get_all_aliases()
                            .is_some_and(|all| all.contains(&name.as_str()))
                })
                .ok_or_else(|| FieldsError::Field {
                    kind: kind.to_owned(),
                    field: name.clone(),
                })?;
            if !arg.get_action().takes_values() {
                if matches!(value, "on" | "true") {
                    argv.push(format!("--{name}"));
                }
            } else if matches!(arg.get_action(), clap::ArgAction::Append) {
                for line in value.lines().map(str::trim).filter(|l| !l.is_empty()) {
                    argv.push(format!("--{name}={line}"));
                }
            } else {
                argv.push(format!("--{name}={value}"));
            }
        }
        let matches = command
            .try_get_matches_from(&argv)
            .map_err(|e| FieldsError::Flags(e.render().to_string().trim().to_owned()))?;
        RunArgs::from_arg_matches(&matches)
            .map_err(|e| FieldsError::Flags(e.render().to_string().trim().to_owned()))
    }

    /// The arguments of the kind the run is: the one dispatch on it.
    pub fn ops(&self) -> &dyn KindArgs {
        match self {
            RunArgs::Sprt(a) => a,
            RunArgs::Spsa(a) => a,
            RunArgs::Games(a) => a,
            RunArgs::Variants(a) => a,
            RunArgs::Datagen(a) => a,
        }
    }

    /// The spec, with the files that flags name read from `files`.
    pub fn spec_with(&self, files: &dyn Files) -> anyhow::Result<pb::RunSpec> {
        self.ops().spec_with(files)
    }
}

/// The flags of one kind of run (`run_args/{sprt,spsa,games,variants,datagen}.rs`),
/// each building its kind's part of the spec; the shared settings build the
/// rest.
pub trait KindArgs: std::fmt::Debug {
    fn kind(&self) -> RunKind;

    /// The flags every kind shares.
    fn settings(&self) -> &MatchArgs;

    /// The kind's part of the spec, with the files flags name read from `files`.
    fn kind_spec(&self, files: &dyn Files) -> anyhow::Result<pb::run_spec::Kind>;

    /// The rule set the run's settings name (a variants run: its reference).
    fn rules(&self) -> String {
        self.settings().rules.clone()
    }

    /// The spec these arguments describe, with its files read from `files`.
    fn spec_with(&self, files: &dyn Files) -> anyhow::Result<pb::RunSpec> {
        let mut spec = self
            .settings()
            .spec(self.kind_spec(files)?, self.kind().as_str(), files)?;
        if let Some(settings) = spec.settings.as_mut() {
            settings.rules = self.rules();
        }
        Ok(spec)
    }

    /// The spec, with its files read from disk.
    fn spec(&self) -> anyhow::Result<pb::RunSpec> {
        self.spec_with(&Disk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_controls_reach_the_wire() {
        let wire = |text: &str| pb::Limit::from(text.parse::<Limit>().unwrap()).kind;
        let Some(pb::limit::Kind::Clock(c)) = wire("tc=40/60+0.5") else {
            panic!("a clock")
        };
        assert_eq!((c.moves_to_go, c.base_ms, c.inc_ms), (40, 60_000, 500));
        let Some(pb::limit::Kind::Clock(c)) = wire("tc=10+0.1") else {
            panic!("a clock")
        };
        assert_eq!((c.moves_to_go, c.base_ms, c.inc_ms), (0, 10_000, 100));
    }

    #[derive(Debug, clap::Parser)]
    struct Flags {
        #[command(flatten)]
        m: MatchArgs,
    }

    fn spec(args: &[&str], kind: pb::run_spec::Kind) -> anyhow::Result<pb::RunSpec> {
        use clap::Parser;
        let flags = Flags::try_parse_from(std::iter::once("t").chain(args.iter().copied()))?;
        flags.m.spec(kind, "t", &Disk)
    }

    fn games() -> pb::run_spec::Kind {
        pb::run_spec::Kind::Games(pb::GamesSpec {
            pairs: 10,
            ..Default::default()
        })
    }

    #[test]
    fn a_pgn_file_is_no_book() {
        let err = spec(&["--nodes", "100", "--book", "masters.PGN"], games())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a PGN file holds games") && err.contains("asset add masters.PGN"),
            "{err}"
        );
    }

    #[test]
    fn worker_rules_reach_the_wire_and_the_coordinator_checks_them() {
        use crate::runs::{RunSpec, SpeedRule};
        let wire = spec(
            &[
                "--movetime",
                "100",
                "--exclude-flagged",
                "--scale-to-nps",
                "500000",
            ],
            games(),
        )
        .unwrap();
        let run = RunSpec::try_from(wire).unwrap();
        assert!(run.workers.exclude_flagged);
        assert_eq!(
            run.workers.speed,
            Some(SpeedRule::Scale {
                reference_nps: 500_000
            })
        );
        assert!(
            spec(
                &[
                    "--movetime",
                    "100",
                    "--scale-to-nps",
                    "1",
                    "--refuse-below-nps",
                    "1"
                ],
                games()
            )
            .is_err()
        );
        let untimed = spec(&["--nodes", "100", "--refuse-below-nps", "1000"], games()).unwrap();
        let err = RunSpec::try_from(untimed).unwrap_err().to_string();
        assert!(err.contains("timed limit"), "{err}");
        let tune = pb::run_spec::Kind::Spsa(pb::SpsaSpec {
            params: vec![pb::SpsaParam {
                name: "chariot_value".to_owned(),
                start: 850.0,
                min: 700.0,
                max: 1000.0,
                c_end: 20.0,
                r_end: 0.002,
                is_float: false,
            }],
            games: 100,
            ..Default::default()
        });
        let err = RunSpec::try_from(spec(&["--nodes", "100", "--exclude-flagged"], tune).unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("SPSA runs cannot exclude workers"), "{err}");
        let plain = spec(&["--nodes", "100"], games()).unwrap();
        assert!(RunSpec::try_from(plain).unwrap().workers.is_default());
    }

    #[test]
    fn required_flags_come_from_the_flag_and_the_form_alike() {
        use crate::runs::RunSpec;
        let wire = spec(
            &["--nodes", "100", "--require-flags", "bmi2, avx2"],
            games(),
        )
        .unwrap();
        let names = &wire.workers.as_ref().unwrap().require_flags;
        assert_eq!(names, &["bmi2", "avx2"]);
        let run = RunSpec::try_from(wire).unwrap();
        assert_eq!(run.workers.require_flags.to_string(), "avx2,bmi2");
        let form = RunArgs::from_fields(
            "games",
            &fields(&[
                ("pairs", "10"),
                ("nodes", "100"),
                ("require-flags", "avx2,bmi2"),
            ]),
        )
        .unwrap();
        let from_form = RunSpec::try_from(form.spec_with(&Disk).unwrap()).unwrap();
        assert_eq!(from_form.workers, run.workers);
        let typo = spec(
            &["--nodes", "100", "--require-flags", "avx2,avx-512"],
            games(),
        )
        .unwrap();
        let err = RunSpec::try_from(typo).unwrap_err().to_string();
        assert!(
            err.contains("require_flags") && err.contains("\"avx-512\""),
            "{err}"
        );
    }

    fn fields(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn form_fields_build_the_spec_the_command_line_builds() {
        let pasted = Pasted(
            [(
                PathBuf::from("dev.toml"),
                "chariot_value = 950\n".to_owned(),
            )]
            .into(),
        );
        let cli = RunArgs::try_parse_from([
            "sprt",
            "--elo0",
            "-1.5",
            "--elo1",
            "4",
            "--nodes",
            "500",
            "--dev",
            "dev.toml",
            "--dev-option",
            "Hash=32",
            "--dev-option",
            "Threads=1",
            "--no-adjudication",
        ])
        .unwrap();
        let form = RunArgs::from_fields(
            "sprt",
            &fields(&[
                ("elo0", "-1.5"),
                ("elo1", " 4 "),
                ("nodes", "500"),
                ("depth", ""),
                ("dev", "dev.toml"),
                ("dev-option", "Hash=32\n\nThreads=1\n"),
                ("no-adjudication", "on"),
            ]),
        )
        .unwrap();
        let expected = cli.spec_with(&pasted).unwrap();
        assert_eq!(form.spec_with(&pasted).unwrap(), expected);
        let Some(pb::run_spec::Kind::Sprt(sprt)) = &expected.kind else {
            panic!("an sprt spec")
        };
        assert_eq!(sprt.dev_params["chariot_value"], 950);
        assert_eq!(sprt.elo0, -1.5);
    }

    #[test]
    fn random_plies_follow_the_builtin_move_or_each_line() {
        let start = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";
        let pasted = Pasted(
            [
                (PathBuf::from("lines.epd"), format!("{start} moves h2e2\n")),
                (PathBuf::from("book.epd"), format!("{start}\n")),
            ]
            .into(),
        );
        let openings = |flags: &[&str]| {
            let mut args = vec!["games", "--pairs", "2", "--nodes", "100"];
            args.extend(flags);
            let spec = RunArgs::try_parse_from(args)
                .unwrap()
                .spec_with(&pasted)
                .unwrap();
            OpeningSource::from_wire(spec.settings.unwrap().openings, "openings").unwrap()
        };
        let lines = |random_plies| OpeningSource::Lines {
            lines: vec![format!("{start} moves h2e2")],
            random_plies,
        };
        assert_eq!(openings(&[]), OpeningSource::Builtin { random_plies: 4 });
        assert_eq!(
            openings(&["--random-plies", "7"]),
            OpeningSource::Builtin { random_plies: 7 }
        );
        assert_eq!(openings(&["--openings", "lines.epd"]), lines(0));
        assert_eq!(
            openings(&["--openings", "lines.epd", "--random-plies", "3"]),
            lines(3)
        );
        let book = |flags: &[&str]| {
            let mut all = vec!["--book", "book.epd"];
            all.extend(flags);
            openings(&all).random_plies()
        };
        assert_eq!((book(&[]), book(&["--random-plies", "5"])), (0, 5));
    }

    #[test]
    fn bad_fields_are_refused_with_what_was_wrong() {
        let err =
            |kind: &str, list: &[(&str, &str)]| match RunArgs::from_fields(kind, &fields(list)) {
                Ok(args) => format!("{:#}", args.spec_with(&Pasted::default()).unwrap_err()),
                Err(e) => e.to_string(),
            };
        assert!(err("bogus", &[]).contains("unknown run kind \"bogus\""));
        assert!(err("games", &[("elo0", "1")]).contains("unknown field \"elo0\" for a games run"));
        let text = err("sprt", &[("elo1", "five"), ("nodes", "100")]);
        assert!(text.contains("--elo1") && text.contains("five"), "{text}");
        let text = err("sprt", &[("nodes", "100"), ("depth", "3")]);
        assert!(text.contains("cannot be used with"), "{text}");
        let text = err("games", &[("pairs", "10")]);
        assert!(text.contains("give a search limit"), "{text}");
        let text = err(
            "games",
            &[("pairs", "10"), ("nodes", "100"), ("dev", "/etc/passwd")],
        );
        assert!(text.contains("reads no files on the server"), "{text}");
        let text = err("sprt", &[("nodes", "100"), ("openings", "/etc/book.epd")]);
        assert!(text.contains("reads no files on the server"), "{text}");
    }
}
