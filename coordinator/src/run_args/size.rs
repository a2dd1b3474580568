//! `--games N` or `--pairs N`: how long a run is, in the one vocabulary
//! every run command and `modify` share. Games come in pairs (each opening
//! played with both colours), so `--games` is even and `--pairs` is half of
//! it; either may be given, not both.

use anyhow::bail;
use clap::Args;

/// A run's length: its cap (sprt, `modify`), its plan (spsa) or the games
/// it plays (games, variants: per variant, datagen). Invariant (clap's):
/// not both given.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct Size {
    /// The run's length in games, an even number (sprt: the cap without a
    /// verdict, none = no cap; spsa: the tune's length; variants: per
    /// variant; `modify`: the new cap over the whole run).
    #[arg(long, value_name = "N", conflicts_with = "pairs", alias = "max-games")]
    games: Option<u64>,
    /// The same length in game pairs (half of --games).
    #[arg(long, value_name = "N")]
    pairs: Option<u64>,
}

impl Size {
    /// The length in pairs, if either flag gives it; odd `--games` is
    /// refused.
    pub fn pairs(&self) -> anyhow::Result<Option<u64>> {
        match (self.games, self.pairs) {
            (Some(g), _) if g % 2 == 1 => {
                bail!("--games {g}: games come in pairs, give an even number (or --pairs)")
            }
            (Some(g), _) => Ok(Some(g / 2)),
            (None, p) => Ok(p),
        }
    }

    /// The length in pairs, which this kind of run needs.
    pub fn required_pairs(&self) -> anyhow::Result<u64> {
        match self.pairs()? {
            Some(p) => Ok(p),
            None => bail!("give the run's length: --pairs N or --games N"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Flags {
        #[command(flatten)]
        size: Size,
    }

    fn pairs(args: &[&str]) -> anyhow::Result<Option<u64>> {
        Flags::try_parse_from(std::iter::once("t").chain(args.iter().copied()))?
            .size
            .pairs()
    }

    #[test]
    fn games_and_pairs_name_one_length() {
        assert_eq!(pairs(&["--games", "200"]).unwrap(), Some(100));
        assert_eq!(pairs(&["--pairs", "100"]).unwrap(), Some(100));
        assert_eq!(pairs(&["--max-games", "200"]).unwrap(), Some(100));
        assert_eq!(pairs(&[]).unwrap(), None);
        let odd = pairs(&["--games", "201"]).unwrap_err().to_string();
        assert!(odd.contains("give an even number"), "{odd}");
        assert!(pairs(&["--games", "2", "--pairs", "1"]).is_err());
        let none = Size::default().required_pairs().unwrap_err().to_string();
        assert!(none.contains("--pairs N or --games N"), "{none}");
    }
}
