//! `modify RUN`: change a running test's cap, priority or throughput share
//! on a served coordinator. What would invalidate its statistics (players,
//! limits, rules, openings, SPRT bounds, adjudication) is refused here with
//! a message that says so: the run commands' flags for them are accepted,
//! hidden, only to name them in that refusal.

use anyhow::bail;
use clap::Args;
use xq_coordinator::run_args::Size;
use xq_proto::{outln, pb};

use super::display;
use super::remote::Remote;

/// `modify RUN [--games N | --pairs N] [--priority P] [--share S]`.
#[derive(Debug, Args)]
pub struct ModifyArgs {
    #[command(flatten)]
    remote: Remote,
    run: u64,
    /// The new cap (`--games N` or `--pairs N`, the run commands' flags),
    /// over the whole run (a variants run: over all its variants); not
    /// below the games already handed out.
    #[command(flatten)]
    size: Size,
    /// The new priority: higher runs get workers first.
    #[arg(long, allow_hyphen_values = true)]
    priority: Option<i32>,
    /// The new throughput share, 1 to 10000: among runs of equal priority,
    /// workers in proportion to it (100 = the normal share).
    #[arg(long)]
    share: Option<u32>,
    #[command(flatten)]
    fixed: Fixed,
}

impl ModifyArgs {
    /// Sends the change and prints the run's status line after it.
    pub fn run(self) -> anyhow::Result<()> {
        if let Some((flag, what)) = self.fixed.given() {
            bail!(
                "cannot change {what} (--{flag}) of a running test: it would invalidate \
                 the statistics; start a new run"
            );
        }
        let pairs = self.size.pairs()?;
        if pairs.is_none() && self.priority.is_none() && self.share.is_none() {
            bail!("nothing to change: give --games or --pairs, --priority or --share");
        }
        let (rt, mut admin) = self.remote.connect()?;
        let request = pb::ModifyRunRequest {
            run_id: self.run,
            pairs,
            priority: self.priority,
            share: self.share,
        };
        let run = rt
            .block_on(admin.modify_run(request))?
            .into_inner()
            .run
            .ok_or_else(|| anyhow::anyhow!("the coordinator sent no run"))?;
        outln!("{}", display::status_line(&run))?;
        Ok(())
    }
}

/// Declares [`Fixed`]: each hidden flag, and what it sets in words.
macro_rules! fixed_flags {
    ($($field:ident = $flag:literal, $what:literal;)*) => {
        /// The run commands' flags for what a running test cannot change;
        /// hidden, given only to be refused by name.
        #[derive(Debug, Args)]
        pub struct Fixed {
            $(
                #[arg(long = $flag, hide = true, num_args = 0..=1,
                      allow_negative_numbers = true, action = clap::ArgAction::Append)]
                $field: Option<Vec<String>>,
            )*
        }

        impl Fixed {
            /// The first such flag given: its name and what it sets.
            fn given(&self) -> Option<(&'static str, &'static str)> {
                $(
                    if self.$field.is_some() {
                        return Some(($flag, $what));
                    }
                )*
                None
            }
        }
    };
}

fixed_flags! {
    dev = "dev", "the players";
    base = "base", "the players";
    params = "params", "the players";
    dev_engine = "dev-engine", "the players";
    base_engine = "base-engine", "the players";
    engine = "engine", "the players";
    dev_option = "dev-option", "the players";
    base_option = "base-option", "the players";
    nodes = "nodes", "the limits";
    depth = "depth", "the limits";
    movetime = "movetime", "the limits";
    tc = "tc", "the limits";
    dev_limit = "dev-limit", "the limits";
    base_limit = "base-limit", "the limits";
    hash = "hash", "the limits";
    rules = "rules", "the rules";
    draw_contempt = "draw-contempt", "the rules";
    openings = "openings", "the openings";
    book = "book", "the openings";
    random_plies = "random-plies", "the openings";
    seed = "seed", "the openings";
    elo0 = "elo0", "the SPRT bounds";
    elo1 = "elo1", "the SPRT bounds";
    alpha = "alpha", "the SPRT bounds";
    beta = "beta", "the SPRT bounds";
    model = "model", "the SPRT bounds";
    batch_pairs = "batch-pairs", "the slices";
    no_adjudication = "no-adjudication", "the adjudication";
    resign_cp = "resign-cp", "the adjudication";
    resign_moves = "resign-moves", "the adjudication";
    draw_cp = "draw-cp", "the adjudication";
    draw_moves = "draw-moves", "the adjudication";
    draw_after = "draw-after", "the adjudication";
    max_plies = "max-plies", "the adjudication";
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};
    use xq_coordinator::run_args::RunArgs;

    #[derive(Debug, clap::Parser)]
    struct Modify {
        #[command(flatten)]
        args: ModifyArgs,
    }

    /// Every flag `modify` refuses by name is one a run command takes, so
    /// a flag renamed there cannot linger here under its old name.
    #[test]
    fn the_refused_flags_are_the_run_commands_flags() {
        let runs = RunArgs::command();
        let taken: Vec<String> = runs
            .get_subcommands()
            .flat_map(|kind| kind.get_arguments())
            .filter_map(|a| a.get_long().map(str::to_owned))
            .collect();
        let modify = Modify::command();
        let refused: Vec<&str> = modify
            .get_arguments()
            .filter(|a| a.is_hide_set())
            .filter_map(|a| a.get_long())
            .collect();
        assert!(refused.len() > 30, "{refused:?}");
        for flag in refused {
            assert!(
                taken.iter().any(|t| t == flag),
                "modify refuses --{flag}, which no run command takes"
            );
        }
        for shared in ["games", "pairs", "priority"] {
            assert!(modify.get_arguments().any(|a| a.get_long() == Some(shared)));
            assert!(taken.iter().any(|t| t == shared), "--{shared}");
        }
    }

    #[test]
    fn modify_takes_the_run_commands_length() {
        let parse = |args: &[&str]| {
            Modify::try_parse_from(["modify", "7"].iter().chain(args))
                .map_err(|e| e.to_string())
                .and_then(|m| m.args.size.pairs().map_err(|e| e.to_string()))
        };
        assert_eq!(parse(&["--games", "300"]), Ok(Some(150)));
        assert_eq!(parse(&["--pairs", "150"]), Ok(Some(150)));
        assert_eq!(parse(&["--max-games", "300"]), Ok(Some(150)));
        assert!(parse(&["--games", "301"]).unwrap_err().contains("even"));
    }
}
