//! Domain rules of the contract's values: what must hold beyond a message's
//! shape (counts that add up, ranges, names). The wire conversions in
//! [`crate::convert`] call these after building a value, so a value read from
//! the wire has passed them; senders may call them too.

use xq_engine::rules::Reason;

use crate::blob::{BlobHeader, MAX_UPLOAD_BYTES};
use crate::engine_source::{
    BUILD_TOOLS, FailedBuild, MAX_BINARY_BYTES, MAX_BUILD_BYTES, MAX_BUILD_REASON_BYTES,
    MAX_LOG_TAIL_BYTES, MAX_REPO_BYTES, REPO_SCHEMES, is_build_tool, is_commit, is_ref_name,
};
use crate::error::{Invalid, invalid};
use crate::game_record::{MAX_PLIES_PER_GAME, MAX_STDERR_TAIL_BYTES};
use crate::machine::{MAX_CPU_MODEL_BYTES, MAX_ISA_BYTES};
use crate::variant_stats::CONVERTIBLE;
use crate::work::MAX_BINARIES;
use crate::{
    BatchOutcome, EngineRef, EngineSource, GameRecord, Limit, MAX_RANDOM_PLIES, Machine,
    OpeningSlice, OpeningSource, PlayerSpec, Totals, VariantStats, WorkSpec, is_sha256_hex,
};

/// Most distinct end reasons in one record.
pub const MAX_REASONS: usize = 32;
/// Longest end-reason name, in bytes.
pub const MAX_REASON_BYTES: usize = 64;

fn sum(values: &[u64]) -> Option<u64> {
    values.iter().try_fold(0u64, |a, &c| a.checked_add(c))
}

impl Limit {
    /// Every count at least 1.
    pub fn validate(&self) -> Result<(), Invalid> {
        let field = match self {
            Limit::Nodes(_) => "limit.nodes",
            Limit::Depth(_) => "limit.depth",
            Limit::MoveTimeMs(_) => "limit.movetime_ms",
            Limit::Clock(tc) if tc.moves_to_go == Some(0) => "limit.clock.moves_to_go",
            Limit::Clock(_) => "limit.clock.base_ms",
        };
        if self.is_valid() {
            Ok(())
        } else {
            invalid(field, "must be at least 1")
        }
    }
}

impl OpeningSource {
    /// At most [`MAX_RANDOM_PLIES`] random plies; at least one line, none
    /// empty. (Whether every line parses is checked once per run, when the
    /// coordinator creates it.)
    pub fn validate(&self, field: &str) -> Result<(), Invalid> {
        let random_plies = self.random_plies();
        if random_plies > MAX_RANDOM_PLIES {
            let kind = match self {
                OpeningSource::Builtin { .. } => "builtin",
                OpeningSource::Lines { .. } => "lines",
                OpeningSource::Book { .. } => "book",
            };
            return invalid(
                format!("{field}.{kind}.random_plies"),
                format!("{random_plies} is above {MAX_RANDOM_PLIES}"),
            );
        }
        match self {
            OpeningSource::Lines { lines, .. }
                if lines.is_empty() || lines.iter().any(|l| l.trim().is_empty()) =>
            {
                invalid(
                    format!("{field}.lines"),
                    "need at least one line and no empty lines",
                )
            }
            OpeningSource::Book { sha256, .. } if !is_sha256_hex(sha256) => invalid(
                format!("{field}.book.sha256"),
                format!("{sha256:?} is not 64 lowercase hex digits"),
            ),
            _ => Ok(()),
        }
    }
}

impl OpeningSlice {
    pub fn validate(&self) -> Result<(), Invalid> {
        self.source.validate("openings")?;
        if self.count == 0 {
            return invalid("openings.count", "must be at least 1");
        }
        Ok(())
    }
}

fn sha256_field(field: &str, sha256: &str) -> Result<(), Invalid> {
    if is_sha256_hex(sha256) {
        Ok(())
    } else {
        invalid(
            field,
            format!("{} is not 64 lowercase hex digits", crate::quote(sha256)),
        )
    }
}

impl EngineRef {
    /// A name of 1 to 64 characters, and exactly one of a registered engine
    /// (an untagged SHA-256 in lowercase hex, or none (empty, size 0) with at
    /// least one tagged build; at most [`MAX_BINARIES`] builds of distinct
    /// ARCH values, each with its SHA-256) and a source resolved to its
    /// commit, with no executable and a declared signature or none (a lease's engine).
    pub fn validate(&self) -> Result<(), Invalid> {
        self.validate_name()?;
        match &self.source {
            None => self.validate_executables(),
            Some(source) => {
                self.validate_source_parts()?;
                source.validate("engine.source", Commit::Resolved)
            }
        }
    }

    fn validate_executables(&self) -> Result<(), Invalid> {
        if self.has_untagged() {
            sha256_field("engine.sha256", &self.sha256)?;
        } else if self.binaries.is_empty() {
            return invalid(
                "engine.sha256",
                "empty, and no tagged build: an engine needs at least one executable",
            );
        } else if self.size != 0 {
            return invalid(
                "engine.size",
                format!("{} bytes of no untagged executable", self.size),
            );
        }
        if self.binaries.len() > MAX_BINARIES {
            return invalid(
                "engine.binaries",
                format!("{} builds, at most {MAX_BINARIES}", self.binaries.len()),
            );
        }
        for (i, b) in self.binaries.iter().enumerate() {
            sha256_field("engine.binaries.sha256", &b.sha256)?;
            if self.binaries[..i].iter().any(|o| o.arch == b.arch) {
                return invalid(
                    "engine.binaries.arch",
                    format!("{} twice: one build per ARCH value", b.arch),
                );
            }
        }
        Ok(())
    }

    /// A source engine as a request to create a run names it: a name, a
    /// source whose commit may still be a branch or tag to resolve
    /// ([`EngineSource::validate`]), no executable, its declared signature (or none) and
    /// no options (a run gives its players' options beside their engines).
    pub fn validate_source_request(&self) -> Result<(), Invalid> {
        self.validate_name()?;
        let Some(source) = &self.source else {
            return invalid("engine.source", "missing: a source engine needs its source");
        };
        self.validate_source_parts()?;
        if !self.options.is_empty() {
            return invalid(
                "engine.options",
                "a source engine's options go beside it, with the player's options",
            );
        }
        source.validate("engine.source", Commit::MayBeRef)
    }

    fn validate_name(&self) -> Result<(), Invalid> {
        if self.name.is_empty() || self.name.chars().count() > 64 {
            return invalid("engine.name", "must be 1 to 64 characters");
        }
        Ok(())
    }

    /// A source engine has no executable yet; its signature, if declared, is
    /// at least 1 node (none is a declared choice: [`crate::Signature`]).
    fn validate_source_parts(&self) -> Result<(), Invalid> {
        if !self.sha256.is_empty() || self.size != 0 || !self.binaries.is_empty() {
            return invalid(
                "engine.sha256",
                "give an executable or a source, not both (a source engine's sha256 is empty \
                 and its size 0)",
            );
        }
        match self.signature {
            Some(s) => s.validate("engine.signature"),
            None => Ok(()),
        }
    }
}

/// Whether a source's commit must be a full commit id already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// A lease's or a run's source: 40 lowercase hex digits.
    Resolved,
    /// A request to create a run: a commit, or empty with a branch or tag
    /// in `git_ref` for the coordinator to resolve.
    MayBeRef,
}

impl EngineSource {
    /// The source's rules ([`EngineSource`]'s invariants); `field` names it
    /// in errors.
    pub fn validate(&self, field: &str, commit: Commit) -> Result<(), Invalid> {
        let at = |name: &str| format!("{field}.{name}");
        let quoted = crate::quote;
        let scheme_ok = self
            .repo
            .split_once("://")
            .is_some_and(|(scheme, rest)| REPO_SCHEMES.contains(&scheme) && !rest.is_empty());
        if self.repo.len() > MAX_REPO_BYTES
            || !scheme_ok
            || self
                .repo
                .chars()
                .any(|c| c.is_whitespace() || c.is_control())
        {
            return invalid(
                at("repo"),
                format!(
                    "{} is not a repository URL of at most {MAX_REPO_BYTES} bytes without \
                     spaces: {}:// followed by where",
                    quoted(&self.repo),
                    REPO_SCHEMES.join("://, ")
                ),
            );
        }
        if let Some(r) = &self.git_ref
            && !is_ref_name(r)
        {
            return invalid(
                at("git_ref"),
                format!("{} is not a branch or tag name", quoted(r)),
            );
        }
        let unresolved_ok = commit == Commit::MayBeRef && self.commit.is_empty();
        if unresolved_ok && self.git_ref.is_none() {
            return invalid(at("commit"), "give a commit, or a branch or tag to resolve");
        }
        if !unresolved_ok && !is_commit(&self.commit) {
            return invalid(
                at("commit"),
                format!(
                    "{} is not a full commit id (40 lowercase hex digits){}",
                    quoted(&self.commit),
                    if commit == Commit::MayBeRef {
                        "; name a branch or tag as the ref instead"
                    } else {
                        ""
                    }
                ),
            );
        }
        if self.build.trim().is_empty()
            || self.build.len() > MAX_BUILD_BYTES
            || self.build.contains('\0')
        {
            return invalid(
                at("build"),
                format!("the build command must be 1 to {MAX_BUILD_BYTES} bytes without NUL"),
            );
        }
        let escapes = self.binary.split('/').any(|c| c == "..");
        if self.binary.is_empty()
            || self.binary.len() > MAX_BINARY_BYTES
            || self.binary.starts_with('/')
            || escapes
            || self.binary.chars().any(char::is_control)
        {
            return invalid(
                at("binary"),
                format!(
                    "{} is not a path inside the checkout: 1 to {MAX_BINARY_BYTES} bytes, \
                     relative, without '..' or control characters",
                    quoted(&self.binary)
                ),
            );
        }
        if let Some(unknown) = self.needs.iter().find(|t| !is_build_tool(t)) {
            return invalid(
                at("needs"),
                format!(
                    "unknown tool {}: a worker reports only {}",
                    quoted(unknown),
                    BUILD_TOOLS.join(", ")
                ),
            );
        }
        let mut seen = std::collections::BTreeSet::new();
        if let Some(twice) = self.needs.iter().find(|t| !seen.insert(t.as_str())) {
            return invalid(at("needs"), format!("{} is named twice", quoted(twice)));
        }
        Ok(())
    }
}

impl FailedBuild {
    /// A full commit id, a reason of one line of 1 to [`MAX_BUILD_REASON_BYTES`]
    /// bytes and a log tail of at most [`MAX_LOG_TAIL_BYTES`].
    pub fn validate(&self) -> Result<(), Invalid> {
        if !is_commit(&self.commit) {
            return invalid(
                "commit",
                format!(
                    "{} is not a full commit id (40 lowercase hex digits)",
                    crate::quote(&self.commit)
                ),
            );
        }
        if self.reason.trim().is_empty()
            || self.reason.len() > MAX_BUILD_REASON_BYTES
            || self.reason.chars().any(char::is_control)
        {
            return invalid(
                "reason",
                format!("must be one line of 1 to {MAX_BUILD_REASON_BYTES} bytes"),
            );
        }
        if self.log_tail.len() > MAX_LOG_TAIL_BYTES {
            return invalid(
                "log_tail",
                format!(
                    "{} bytes, at most {MAX_LOG_TAIL_BYTES}",
                    self.log_tail.len()
                ),
            );
        }
        Ok(())
    }
}

impl Machine {
    /// A CPU model of at most [`MAX_CPU_MODEL_BYTES`] bytes without control
    /// characters, an ISA name of 1 to [`MAX_ISA_BYTES`] bytes of
    /// `[a-z0-9_]`, at least one core.
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.cpu_model.len() > MAX_CPU_MODEL_BYTES
            || self.cpu_model.chars().any(char::is_control)
        {
            return invalid(
                "machine.cpu_model",
                format!(
                    "{} is not at most {MAX_CPU_MODEL_BYTES} bytes of printable text",
                    crate::quote(&self.cpu_model)
                ),
            );
        }
        let isa_chars = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_';
        if !(1..=MAX_ISA_BYTES).contains(&self.isa.len()) || !self.isa.bytes().all(isa_chars) {
            return invalid(
                "machine.isa",
                format!(
                    "{} is not 1 to {MAX_ISA_BYTES} bytes of a-z, 0-9 and _",
                    crate::quote(&self.isa)
                ),
            );
        }
        if self.cores == 0 {
            return invalid("machine.cores", "must be at least 1");
        }
        Ok(())
    }
}

impl BlobHeader {
    /// A SHA-256 in lowercase hex and a size the registry takes over the wire.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.validate_within(MAX_UPLOAD_BYTES)
    }

    /// A SHA-256 in lowercase hex and a size of at most `most` bytes (a
    /// server's setting: [`MAX_UPLOAD_BYTES`] over the network, more for
    /// the command line's in-process server on its own database file).
    pub fn validate_within(&self, most: u64) -> Result<(), Invalid> {
        if !is_sha256_hex(&self.sha256) {
            return invalid(
                "header.sha256",
                format!(
                    "{} is not 64 lowercase hex digits",
                    crate::quote(&self.sha256)
                ),
            );
        }
        if self.size > most {
            return invalid(
                "header.size",
                format!("{} bytes is more than an upload takes ({most})", self.size),
            );
        }
        Ok(())
    }
}

impl PlayerSpec {
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.hash_mb == 0 {
            return invalid("player.hash_mb", "must be at least 1");
        }
        if !(1..=crate::capacity::MAX_ENGINE_THREADS).contains(&self.threads) {
            return invalid(
                "player.threads",
                format!(
                    "{} search threads; 1 to {}",
                    self.threads,
                    crate::capacity::MAX_ENGINE_THREADS
                ),
            );
        }
        if let Some(name) = self.params.keys().find(|k| k.is_empty()) {
            return invalid("player.params", format!("empty name {name:?}"));
        }
        self.limit.validate()?;
        if let Some(e) = &self.engine {
            e.validate()?;
        }
        Ok(())
    }
}

impl WorkSpec {
    pub fn validate(&self) -> Result<(), Invalid> {
        for p in &self.players {
            p.validate()?;
        }
        self.openings.validate()?;
        if self.pairs == 0 || u64::from(self.pairs) != self.openings.count {
            return invalid(
                "work.pairs",
                format!("{} pairs for {} openings", self.pairs, self.openings.count),
            );
        }
        Ok(())
    }
}

impl Totals {
    /// Checks that the counts describe exactly `pairs` complete pairs;
    /// `field` names the record (`results`, `totals`).
    pub fn check(&self, pairs: u64, field: &str) -> Result<(), Invalid> {
        let at = |name: &str| format!("{field}.{name}");
        if self.pairs != pairs {
            return invalid(
                at("pairs"),
                format!(
                    "results cover {} pairs but the lease has {pairs}",
                    self.pairs
                ),
            );
        }
        let games = pairs.saturating_mul(2);
        if sum(&self.pentanomial.0) != Some(pairs) {
            return invalid(
                at("pentanomial"),
                format!("{:?} does not sum to the {pairs} pairs", self.pentanomial.0),
            );
        }
        let wdl = &self.wdl;
        if sum(&[wdl.wins, wdl.draws, wdl.losses]) != Some(games) {
            return invalid(
                at("wins/draws/losses"),
                format!(
                    "wins {} + draws {} + losses {} is not 2 × {pairs} pairs",
                    wdl.wins, wdl.draws, wdl.losses
                ),
            );
        }
        if !self.reasons.is_empty() {
            let total = self
                .reasons
                .values()
                .try_fold(0u64, |a, &c| a.checked_add(c));
            if total != Some(games) {
                return invalid(
                    at("reasons"),
                    format!(
                        "end reasons sum to {} games, expected {games}",
                        total.unwrap_or(u64::MAX)
                    ),
                );
            }
        }
        if self.reasons.len() > MAX_REASONS
            || self
                .reasons
                .keys()
                .any(|k| k.is_empty() || k.len() > MAX_REASON_BYTES)
        {
            return invalid(
                at("reasons"),
                format!(
                    "{} end reasons, at most {MAX_REASONS}, each named in 1 to {MAX_REASON_BYTES} bytes",
                    self.reasons.len()
                ),
            );
        }
        if self.total_plies > games.saturating_mul(MAX_PLIES_PER_GAME as u64) {
            return invalid(
                at("total_plies"),
                format!(
                    "{} plies is more than {MAX_PLIES_PER_GAME} per game over {games} games",
                    self.total_plies
                ),
            );
        }
        Ok(())
    }
}

impl BatchOutcome {
    /// Checks that the outcome describes exactly the lease's `pairs` pairs,
    /// with the record of every game (two per pair): a result is counted
    /// only with its evidence.
    pub fn check(&self, pairs: u32) -> Result<(), Invalid> {
        self.totals.check(u64::from(pairs), "results")?;
        let games = 2 * u64::from(pairs);
        if self.games.len() as u64 != games {
            return invalid(
                "results.games",
                format!(
                    "{} game records for the lease's {games} games: a result carries every game it counts",
                    self.games.len()
                ),
            );
        }
        for g in &self.games {
            g.validate().map_err(|e| e.within("results"))?;
        }
        if let Some(v) = &self.variant {
            v.check(pairs)?;
        }
        Ok(())
    }
}

impl GameRecord {
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.moves.len() > MAX_PLIES_PER_GAME {
            return invalid(
                "game.moves",
                format!("{} moves, at most {MAX_PLIES_PER_GAME}", self.moves.len()),
            );
        }
        let opening = self.opening_plies as usize;
        if opening > self.moves.len() {
            return invalid(
                "game.opening_plies",
                format!("{opening} of {} moves", self.moves.len()),
            );
        }
        if self.per_move.len() != self.moves.len() - opening {
            return invalid(
                "game.per_move",
                format!(
                    "{} entries for {} moves after the opening",
                    self.per_move.len(),
                    self.moves.len() - opening
                ),
            );
        }
        if self.red_player > 1 {
            return invalid(
                "game.red_player",
                format!("{} is not 0 or 1", self.red_player),
            );
        }
        if self.stderr_tail.len() > MAX_STDERR_TAIL_BYTES {
            return invalid(
                "game.stderr_tail",
                format!("more than {MAX_STDERR_TAIL_BYTES} bytes"),
            );
        }
        if let Some(ms) = self.overrun_ms
            && self.reason != Reason::TimeForfeit
        {
            return invalid(
                "game.overrun_ms",
                format!(
                    "{ms} ms for a game ended by {}, not a time forfeit",
                    self.reason
                ),
            );
        }
        Ok(())
    }
}

impl VariantStats {
    /// Checks the invariants for a batch of `pairs` pairs, naming the first
    /// field (`results.variant.…`) that does not add up.
    pub fn check(&self, pairs: u32) -> Result<(), Invalid> {
        let bad = |field: &str, reason: String| invalid(format!("results.variant.{field}"), reason);
        let games = 2 * u64::from(pairs);
        if sum(&self.results()) != Some(games) {
            return bad(
                "red_wins",
                format!(
                    "red wins {} + draws {} + black wins {} is not {games} games",
                    self.red_wins, self.draws, self.black_wins
                ),
            );
        }
        if sum(&self.pair_outcomes) != Some(u64::from(pairs)) {
            return bad(
                "pair_outcomes",
                format!("{:?} does not sum to {pairs} pairs", self.pair_outcomes),
            );
        }
        let mut by_game = [0u64; 3];
        for (i, &n) in self.pair_outcomes.iter().enumerate() {
            by_game[i / 3] += n;
            by_game[i % 3] += n;
        }
        if by_game != self.results() {
            return bad(
                "pair_outcomes",
                format!(
                    "{:?} gives results {by_game:?}, not {:?}",
                    self.pair_outcomes,
                    self.results()
                ),
            );
        }
        if sum(&self.plies_histogram) != Some(games) {
            return bad("plies_histogram", format!("does not sum to {games} games"));
        }
        for (i, kind) in CONVERTIBLE.iter().enumerate() {
            if self.converted[i] > self.captured[i] {
                return bad(
                    "converted",
                    format!(
                        "{kind:?}: {} converted of {} captured",
                        self.converted[i], self.captured[i]
                    ),
                );
            }
            let g = self.games_with_conversion[i];
            if g > self.converted[i] || g > games {
                return bad(
                    "games_with_conversion",
                    format!(
                        "{kind:?}: {g} games with {} conversions in {games} games",
                        self.converted[i]
                    ),
                );
            }
        }
        Ok(())
    }
}
