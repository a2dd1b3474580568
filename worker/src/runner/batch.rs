//! [`EnginePlayer`]: the coordinator's leases played by the game runner.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use anyhow::Context;
use xq_engine::params::Params;
use xq_games::openings::{OpeningBook, Order};
use xq_proto::capacity::{Capacity, GameNeeds};
use xq_proto::{BatchOutcome, OpeningSource, PlayerSpec, Protocol, WorkSpec};

use super::{MatchSpec, PlayerConfig, Runner};
use crate::external::{EngineConfig, Timeouts};
use crate::{BatchPlayer, Bench};

/// Plays leases on a [`Runner`]: with the built-in engine, or with registered
/// external engines found in the engine cache (see [`crate::blob_cache`]).
#[derive(Debug)]
pub struct EnginePlayer {
    runner: Runner,
    /// What it offers a game: at most its runner's threads as cores.
    capacity: Capacity,
    bench: OnceLock<Bench>,
    cache: PathBuf,
    /// The book of the last lease's opening source: a run's leases all carry
    /// the same source, so its lines are parsed once, not once per lease.
    book: Mutex<Option<(OpeningSource, OpeningBook)>>,
}

impl EnginePlayer {
    /// A player with `threads` game threads and the default engine cache.
    pub fn new(threads: usize) -> anyhow::Result<EnginePlayer> {
        Self::with_cache(threads, crate::blob_cache::default_dir())
    }

    /// A player with `threads` game threads whose external engines are in
    /// `cache`, with no bound on memory.
    pub fn with_cache(threads: usize, cache: PathBuf) -> anyhow::Result<EnginePlayer> {
        let cores = u32::try_from(threads).unwrap_or(u32::MAX);
        Self::with_capacity(Capacity::of(cores, None), cache)
    }

    /// A player that uses `capacity` (a game thread per core) and whose
    /// external engines are in `cache`.
    pub fn with_capacity(capacity: Capacity, cache: PathBuf) -> anyhow::Result<EnginePlayer> {
        Ok(EnginePlayer {
            runner: Runner::new(capacity.cores as usize)?,
            capacity,
            bench: OnceLock::new(),
            cache,
            book: Mutex::new(None),
        })
    }

    /// The folder of downloaded engines.
    pub fn cache(&self) -> &Path {
        &self.cache
    }

    /// The book of `source`, parsed only when it differs from the last one.
    fn book(&self, source: &OpeningSource) -> anyhow::Result<OpeningBook> {
        let mut last = self.book.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((s, book)) = last.as_ref()
            && s == source
        {
            return Ok(book.clone());
        }
        let book = OpeningBook::load(source, &self.cache).context("the lease's openings")?;
        *last = Some((source.clone(), book.clone()));
        Ok(book)
    }
}

fn player(
    name: &str,
    spec: &PlayerSpec,
    cache: &Path,
    draw_contempt: bool,
) -> anyhow::Result<PlayerConfig> {
    let mut params = Params::default();
    for (key, &value) in &spec.params {
        params
            .set(key, value)
            .with_context(|| format!("{name} parameters"))?;
    }
    Ok(PlayerConfig {
        name: name.to_string(),
        params,
        limit: spec.limit,
        hash_mb: spec.hash_mb.max(1) as usize,
        threads: spec.threads.max(1) as usize,
        engine: spec.engine.as_ref().map(|e| EngineConfig {
            path: crate::blob_cache::path(cache, &e.sha256),
            args: Vec::new(),
            protocol: e.protocol,
            options: crate::blob_cache::options_with_paths(cache, e),
            if_offered: sizing(e.protocol, spec),
            timeouts: Timeouts::default(),
            coords: e.coords,
        }),
        draw_contempt,
    })
}

/// The options that size an external engine as the run asks: its search
/// threads (UCI `Threads`) and hash (UCI `Hash`, UCCI `hashsize`), set when
/// the engine offers them.
fn sizing(protocol: Protocol, spec: &PlayerSpec) -> Vec<(String, String)> {
    let hash = spec.hash_mb.max(1).to_string();
    match protocol {
        Protocol::Uci => vec![
            ("Threads".to_owned(), spec.threads.max(1).to_string()),
            ("Hash".to_owned(), hash),
        ],
        Protocol::Ucci => vec![("hashsize".to_owned(), hash)],
    }
}

/// The match a lease describes, with its openings from `openings`; external
/// engines are looked up in `cache`.
pub fn match_spec(
    work: &WorkSpec,
    openings: OpeningBook,
    cache: &Path,
) -> anyhow::Result<MatchSpec> {
    Ok(MatchSpec {
        players: [
            player(
                &name(&work.players[0], "player 0"),
                &work.players[0],
                cache,
                work.draw_contempt,
            )?,
            player(
                &name(&work.players[1], "player 1"),
                &work.players[1],
                cache,
                work.draw_contempt,
            )?,
        ],
        rules: work.rules,
        pairs: u64::from(work.pairs),
        openings,
        order: Order::Sequential,
        seed: work.openings.seed,
        offset: work.openings.offset,
        opening_per_game: work.openings.per_game,
        adjudication: work.adjudication,
        keep_games: true,
    })
}

fn name(spec: &PlayerSpec, builtin: &str) -> String {
    spec.engine
        .as_ref()
        .map_or_else(|| builtin.to_string(), |e| e.name.clone())
}

impl BatchPlayer for EnginePlayer {
    fn play(
        &self,
        work: &WorkSpec,
        cancel: &Arc<AtomicBool>,
        progress: &(dyn Fn(u32) + Sync),
    ) -> anyhow::Result<BatchOutcome> {
        let at_once = self.games_at_once(work);
        if at_once == 0 {
            anyhow::bail!(
                "one game of the lease needs more than this worker offers ({:?} against {:?})",
                GameNeeds::of(&work.players),
                self.capacity
            );
        }
        let spec = match_spec(work, self.book(&work.openings.source)?, &self.cache)?;
        let pairs = usize::try_from(spec.pairs).unwrap_or(usize::MAX);
        let finished = Mutex::new((vec![0u8; pairs], 0u32));
        let on_game = |g: u64, _: &super::PlayedGame| {
            let mut f = finished.lock().unwrap_or_else(PoisonError::into_inner);
            let (games_of, done) = &mut *f;
            if let Some(n) = games_of.get_mut((g / 2) as usize) {
                *n += 1;
                if *n == 2 {
                    *done += 1;
                    progress(*done);
                }
            }
        };
        Ok(self
            .runner
            .play_at_once(&spec, at_once as usize, cancel, &on_game)?
            .outcome)
    }

    fn games_at_once(&self, work: &WorkSpec) -> u32 {
        self.capacity.games_at_once(GameNeeds::of(&work.players))
    }

    fn blob_cache(&self) -> Option<&Path> {
        Some(&self.cache)
    }

    /// `xq-engine bench` at its default depth, once: its `Nodes searched`
    /// count (equal for every build whose search behaves the same) and its
    /// speed on this machine.
    fn bench(&self) -> Bench {
        *self.bench.get_or_init(|| {
            xq_engine::bench::run(
                xq_engine::bench::DEFAULT_DEPTH,
                &Params::default(),
                &mut std::io::sink(),
            )
            .map(|r| Bench {
                signature: r.nodes,
                nps: r.nps(),
            })
            .unwrap_or_default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draw_contempt_flows_from_the_lease_to_both_players() {
        let mut work = WorkSpec::example();
        work.rules = "reform-2007".parse().unwrap();
        for p in &mut work.players {
            p.params.clear();
        }
        for on in [true, false] {
            work.draw_contempt = on;
            let book =
                OpeningBook::load(&work.openings.source, std::path::Path::new("/nonexistent"))
                    .unwrap();
            let spec = match_spec(&work, book, std::path::Path::new("/nonexistent")).unwrap();
            for p in &spec.players {
                assert_eq!(p.draw_contempt, on);
                let rules = super::super::search_rules(&spec.rules, p.draw_contempt);
                assert_eq!(rules.draw_value_red_cp, if on { -120 } else { 0 });
            }
        }
    }
}
