//! Shape conversion between the generated messages ([`crate::pb`]) and the
//! domain types: `From<T> for pb::T` and `TryFrom<pb::T> for T` with
//! `Error = Invalid`, destructuring every field so that a new proto field
//! cannot be forgotten. A message that is missing a required field, carries
//! an `*_UNSPECIFIED` or unknown enum value or a list of the wrong length is
//! refused here; every value built is then checked by its domain rules
//! ([`crate::validate`]).

use xq_engine::rules::{GameResult, Reason};

use crate::blob::{BlobHeader, UploadPurpose};
use crate::capacity::SpeedCheck;
use crate::error::{Invalid, invalid, quote, required};
use crate::game_record::{MoveStats, pack_moves, unpack_moves};
use crate::machine::{MAX_FLAG_BYTES, MAX_FLAGS};
use crate::work::MAX_BINARIES;
use crate::{
    Adjudication, Arch, BatchOutcome, Coords, EngineBinary, EngineRef, EngineSource, Flag,
    GameRecord, Limit, Machine, OpeningSlice, OpeningSource, Pentanomial, PlayerSpec, Protocol,
    Retention, Signature, TimeControl, Totals, VariantStats, Wdl, WorkSpec, pb,
};

impl From<WorkSpec> for pb::WorkSpec {
    fn from(w: WorkSpec) -> Self {
        let WorkSpec {
            players,
            rules,
            openings,
            pairs,
            adjudication,
            draw_contempt,
        } = w;
        pb::WorkSpec {
            players: players.into_iter().map(Into::into).collect(),
            rules: crate::rule_set::name(&rules),
            openings: Some(openings.into()),
            pairs,
            adjudication: Some(adjudication.into()),
            draw_contempt,
        }
    }
}

impl TryFrom<pb::WorkSpec> for WorkSpec {
    type Error = Invalid;

    fn try_from(w: pb::WorkSpec) -> Result<Self, Invalid> {
        let pb::WorkSpec {
            players,
            rules,
            openings,
            pairs,
            adjudication,
            draw_contempt,
        } = w;
        let players: Vec<PlayerSpec> = players
            .into_iter()
            .map(PlayerSpec::try_from)
            .collect::<Result<_, _>>()?;
        let players: [PlayerSpec; 2] = players.try_into().map_err(|p: Vec<_>| {
            Invalid::new("work.players", format!("{} players, need 2", p.len()))
        })?;
        let work = WorkSpec {
            players,
            rules: crate::rule_set::parse("work.rules", &rules)?,
            openings: required("work.openings", openings)?.try_into()?,
            pairs,
            adjudication: required("work.adjudication", adjudication)?.into(),
            draw_contempt,
        };
        work.validate()?;
        Ok(work)
    }
}

impl From<PlayerSpec> for pb::PlayerSpec {
    fn from(p: PlayerSpec) -> Self {
        let PlayerSpec {
            params,
            limit,
            hash_mb,
            engine,
            threads,
        } = p;
        pb::PlayerSpec {
            params: params.into_iter().collect(),
            limit: Some(limit.into()),
            hash_mb,
            engine: engine.map(Into::into),
            threads,
        }
    }
}

impl TryFrom<pb::PlayerSpec> for PlayerSpec {
    type Error = Invalid;

    fn try_from(p: pb::PlayerSpec) -> Result<Self, Invalid> {
        let pb::PlayerSpec {
            params,
            limit,
            hash_mb,
            engine,
            threads,
        } = p;
        let player = PlayerSpec {
            params: params.into_iter().collect(),
            limit: required("player.limit", limit)?.try_into()?,
            hash_mb,
            engine: engine.map(EngineRef::try_from).transpose()?,
            threads: threads.max(1),
        };
        player.validate()?;
        Ok(player)
    }
}

impl From<SpeedCheck> for pb::SpeedCheck {
    fn from(c: SpeedCheck) -> Self {
        let SpeedCheck {
            player,
            reference_nps,
            min_nps,
        } = c;
        pb::SpeedCheck {
            player: player.into(),
            reference_nps,
            min_nps,
        }
    }
}

impl TryFrom<pb::SpeedCheck> for SpeedCheck {
    type Error = Invalid;

    fn try_from(c: pb::SpeedCheck) -> Result<Self, Invalid> {
        let pb::SpeedCheck {
            player,
            reference_nps,
            min_nps,
        } = c;
        let player = match player {
            0 => 0,
            1 => 1,
            n => return Err(Invalid::new("lease.speed.player", format!("{n}: 0 or 1"))),
        };
        Ok(SpeedCheck {
            player,
            reference_nps,
            min_nps,
        })
    }
}

impl From<Protocol> for pb::EngineProtocol {
    fn from(p: Protocol) -> Self {
        match p {
            Protocol::Uci => pb::EngineProtocol::Uci,
            Protocol::Ucci => pb::EngineProtocol::Ucci,
        }
    }
}

impl From<BlobHeader> for pb::UploadHeader {
    fn from(h: BlobHeader) -> Self {
        let BlobHeader {
            sha256,
            size,
            purpose,
        } = h;
        let what = match purpose {
            UploadPurpose::Engine(name) => pb::upload_purpose::What::Engine(name),
            UploadPurpose::Asset(name) => pb::upload_purpose::What::Asset(name),
            UploadPurpose::WorkerRelease => {
                pb::upload_purpose::What::WorkerRelease(pb::UploadWorkerRelease {})
            }
        };
        pb::UploadHeader {
            sha256,
            size,
            purpose: Some(pb::UploadPurpose { what: Some(what) }),
        }
    }
}

impl TryFrom<Option<pb::UploadPurpose>> for UploadPurpose {
    type Error = Invalid;

    fn try_from(p: Option<pb::UploadPurpose>) -> Result<Self, Invalid> {
        let missing = || {
            Invalid::new(
                "header.purpose",
                "missing: say what the blob is for (an engine, an asset or a worker release)",
            )
        };
        let pb::UploadPurpose { what } = p.ok_or_else(missing)?;
        let named = |field: &str, name: String, most: usize| {
            let chars = name.chars().count();
            if chars == 0 || chars > most {
                return Err(Invalid::new(
                    field,
                    format!("{} must be 1 to {most} characters", crate::quote(&name)),
                ));
            }
            Ok(name)
        };
        Ok(match what.ok_or_else(missing)? {
            pb::upload_purpose::What::Engine(name) => {
                UploadPurpose::Engine(named("header.purpose.engine", name, 64)?)
            }
            pb::upload_purpose::What::Asset(name) => {
                UploadPurpose::Asset(named("header.purpose.asset", name, 128)?)
            }
            pb::upload_purpose::What::WorkerRelease(pb::UploadWorkerRelease {}) => {
                UploadPurpose::WorkerRelease
            }
        })
    }
}

impl TryFrom<pb::UploadHeader> for BlobHeader {
    type Error = Invalid;

    fn try_from(h: pb::UploadHeader) -> Result<Self, Invalid> {
        BlobHeader::from_wire(h, crate::blob::MAX_UPLOAD_BYTES)
    }
}

impl BlobHeader {
    /// The header of an upload of at most `most` bytes (the server's
    /// setting; see [`BlobHeader::validate_within`]).
    pub fn from_wire(h: pb::UploadHeader, most: u64) -> Result<Self, Invalid> {
        let pb::UploadHeader {
            sha256,
            size,
            purpose,
        } = h;
        let header = BlobHeader {
            sha256,
            size,
            purpose: purpose.try_into()?,
        };
        header.validate_within(most)?;
        Ok(header)
    }
}

impl From<EngineRef> for pb::EngineRef {
    fn from(e: EngineRef) -> Self {
        let EngineRef {
            name,
            sha256,
            size,
            signature,
            protocol,
            options,
            coords,
            binaries,
            source,
        } = e;
        let (signature, signature_depth) = Signature::to_wire(signature);
        let coords = match coords {
            None => pb::EngineCoords::Unspecified,
            Some(Coords::FromZero) => pb::EngineCoords::Ranks09,
            Some(Coords::FromOne) => pb::EngineCoords::Ranks110,
        };
        pb::EngineRef {
            name,
            sha256,
            size,
            signature,
            protocol: pb::EngineProtocol::from(protocol).into(),
            options: options.into_iter().collect(),
            coords: coords.into(),
            binaries: binaries.into_iter().map(Into::into).collect(),
            source: source.map(Into::into),
            signature_depth,
        }
    }
}

impl From<EngineBinary> for pb::EngineBinary {
    fn from(b: EngineBinary) -> Self {
        let EngineBinary { arch, sha256, size } = b;
        pb::EngineBinary {
            arch: arch.name().to_owned(),
            sha256,
            size,
        }
    }
}

impl TryFrom<pb::EngineBinary> for EngineBinary {
    type Error = Invalid;

    fn try_from(b: pb::EngineBinary) -> Result<Self, Invalid> {
        let pb::EngineBinary { arch, sha256, size } = b;
        let arch = Arch::parse(&arch).map_err(|e| Invalid::new("engine.binaries.arch", e))?;
        Ok(EngineBinary { arch, sha256, size })
    }
}

/// A lease's engine: a registered executable or a source resolved to its
/// commit ([`EngineRef::validate`]).
impl TryFrom<pb::EngineRef> for EngineRef {
    type Error = Invalid;

    fn try_from(e: pb::EngineRef) -> Result<Self, Invalid> {
        let engine = EngineRef::shape(e)?;
        engine.validate()?;
        Ok(engine)
    }
}

impl EngineRef {
    /// A source engine a request to create a run names
    /// ([`EngineRef::validate_source_request`]: its commit may still be a
    /// branch or tag to resolve).
    pub fn source_request(e: pb::EngineRef) -> Result<Self, Invalid> {
        let engine = EngineRef::shape(e)?;
        engine.validate_source_request()?;
        Ok(engine)
    }

    /// The engine of a message, its enums read, before any rule is checked.
    fn shape(e: pb::EngineRef) -> Result<Self, Invalid> {
        let pb::EngineRef {
            name,
            sha256,
            size,
            signature,
            protocol,
            options,
            coords,
            binaries,
            source,
            signature_depth,
        } = e;
        let signature = Signature::from_wire(signature, signature_depth, "engine.signature")?;
        if binaries.len() > MAX_BINARIES {
            return invalid(
                "engine.binaries",
                format!("{} builds, at most {MAX_BINARIES}", binaries.len()),
            );
        }
        let protocol = match pb::EngineProtocol::try_from(protocol) {
            Ok(pb::EngineProtocol::Uci) => Protocol::Uci,
            Ok(pb::EngineProtocol::Ucci) => Protocol::Ucci,
            _ => return invalid("engine.protocol", format!("unknown value {protocol}")),
        };
        let coords = match pb::EngineCoords::try_from(coords) {
            Ok(pb::EngineCoords::Unspecified) => None,
            Ok(pb::EngineCoords::Ranks09) => Some(Coords::FromZero),
            Ok(pb::EngineCoords::Ranks110) => Some(Coords::FromOne),
            Err(_) => return invalid("engine.coords", format!("unknown value {coords}")),
        };
        Ok(EngineRef {
            name,
            sha256,
            size,
            signature,
            protocol,
            options: options.into_iter().collect(),
            coords,
            binaries: binaries
                .into_iter()
                .map(EngineBinary::try_from)
                .collect::<Result<_, _>>()?,
            source: source.map(EngineSource::from),
        })
    }
}

impl From<EngineSource> for pb::EngineSource {
    fn from(s: EngineSource) -> Self {
        let EngineSource {
            repo,
            commit,
            git_ref,
            build,
            binary,
            needs,
        } = s;
        pb::EngineSource {
            repo,
            commit,
            git_ref: git_ref.unwrap_or_default(),
            build,
            binary,
            needs,
        }
    }
}

/// Every combination has a shape; the rules are [`EngineSource::validate`]'s.
impl From<pb::EngineSource> for EngineSource {
    fn from(s: pb::EngineSource) -> Self {
        let pb::EngineSource {
            repo,
            commit,
            git_ref,
            build,
            binary,
            needs,
        } = s;
        EngineSource {
            repo,
            commit,
            git_ref: (!git_ref.is_empty()).then_some(git_ref),
            build,
            binary,
            needs,
        }
    }
}

impl From<Machine> for pb::Machine {
    fn from(m: Machine) -> Self {
        let Machine {
            cpu_model,
            isa,
            flags,
            cores,
            memory_mib,
        } = m;
        pb::Machine {
            cpu_model,
            isa,
            flags: flags.iter().map(|f| f.name().to_owned()).collect(),
            cores,
            memory_mib,
        }
    }
}

/// A flag name as the wire admits it: 1 to [`MAX_FLAG_BYTES`] bytes of
/// `[a-z0-9_]`.
fn well_formed_flag(name: &str) -> bool {
    (1..=MAX_FLAG_BYTES).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

impl TryFrom<pb::Machine> for Machine {
    type Error = Invalid;

    /// Flags this side does not know are left out (a newer worker may
    /// report more); a malformed name is refused.
    fn try_from(m: pb::Machine) -> Result<Self, Invalid> {
        let pb::Machine {
            cpu_model,
            isa,
            flags,
            cores,
            memory_mib,
        } = m;
        if flags.len() > MAX_FLAGS {
            return invalid(
                "machine.flags",
                format!("{} names, at most {MAX_FLAGS}", flags.len()),
            );
        }
        if let Some(bad) = flags.iter().find(|f| !well_formed_flag(f)) {
            return invalid(
                "machine.flags",
                format!(
                    "{} is not 1 to {MAX_FLAG_BYTES} bytes of a-z, 0-9 and _",
                    quote(bad)
                ),
            );
        }
        let machine = Machine {
            cpu_model,
            isa,
            flags: flags.iter().filter_map(|f| Flag::parse(f)).collect(),
            cores,
            memory_mib,
        };
        machine.validate()?;
        Ok(machine)
    }
}

impl From<TimeControl> for pb::Clock {
    fn from(tc: TimeControl) -> Self {
        let TimeControl {
            base_ms,
            inc_ms,
            moves_to_go,
        } = tc;
        pb::Clock {
            base_ms,
            inc_ms,
            moves_to_go: moves_to_go.unwrap_or(0),
        }
    }
}

impl From<pb::Clock> for TimeControl {
    fn from(c: pb::Clock) -> Self {
        let pb::Clock {
            base_ms,
            inc_ms,
            moves_to_go,
        } = c;
        TimeControl {
            base_ms,
            inc_ms,
            moves_to_go: (moves_to_go != 0).then_some(moves_to_go),
        }
    }
}

impl From<Limit> for pb::Limit {
    fn from(l: Limit) -> Self {
        use pb::limit::Kind;
        let kind = match l {
            Limit::Nodes(n) => Kind::Nodes(n),
            Limit::Depth(d) => Kind::Depth(d),
            Limit::MoveTimeMs(ms) => Kind::MovetimeMs(ms),
            Limit::Clock(tc) => Kind::Clock(tc.into()),
        };
        pb::Limit { kind: Some(kind) }
    }
}

impl TryFrom<pb::Limit> for Limit {
    type Error = Invalid;

    fn try_from(l: pb::Limit) -> Result<Self, Invalid> {
        use pb::limit::Kind;
        let pb::Limit { kind } = l;
        let limit = match required("limit.kind", kind)? {
            Kind::Nodes(n) => Limit::Nodes(n),
            Kind::Depth(d) => Limit::Depth(d),
            Kind::MovetimeMs(ms) => Limit::MoveTimeMs(ms),
            Kind::Clock(c) => Limit::Clock(c.into()),
        };
        limit.validate()?;
        Ok(limit)
    }
}

impl From<OpeningSource> for pb::OpeningSource {
    fn from(s: OpeningSource) -> Self {
        use pb::opening_source::Kind;
        let kind = match s {
            OpeningSource::Builtin { random_plies } => {
                Kind::Builtin(pb::BuiltinOpenings { random_plies })
            }
            OpeningSource::Lines {
                lines,
                random_plies,
            } => Kind::Lines(pb::OpeningLines {
                lines,
                random_plies,
            }),
            OpeningSource::Book {
                sha256,
                random_plies,
            } => Kind::Book(pb::OpeningBook {
                sha256,
                random_plies,
            }),
        };
        pb::OpeningSource { kind: Some(kind) }
    }
}

impl OpeningSource {
    /// The source of a message whose field is called `field` (shape and
    /// [`OpeningSource::validate`]).
    pub fn from_wire(s: Option<pb::OpeningSource>, field: &str) -> Result<Self, Invalid> {
        use pb::opening_source::Kind;
        let pb::OpeningSource { kind } = required(field, s)?;
        let source = match required(field, kind)? {
            Kind::Builtin(pb::BuiltinOpenings { random_plies }) => {
                OpeningSource::Builtin { random_plies }
            }
            Kind::Lines(pb::OpeningLines {
                lines,
                random_plies,
            }) => OpeningSource::Lines {
                lines,
                random_plies,
            },
            Kind::Book(pb::OpeningBook {
                sha256,
                random_plies,
            }) => OpeningSource::Book {
                sha256,
                random_plies,
            },
        };
        source.validate(field)?;
        Ok(source)
    }
}

impl From<OpeningSlice> for pb::OpeningSlice {
    fn from(o: OpeningSlice) -> Self {
        let OpeningSlice {
            source,
            seed,
            offset,
            count,
            per_game,
        } = o;
        pb::OpeningSlice {
            source: Some(source.into()),
            seed,
            offset,
            count,
            per_game,
        }
    }
}

impl TryFrom<pb::OpeningSlice> for OpeningSlice {
    type Error = Invalid;

    fn try_from(o: pb::OpeningSlice) -> Result<Self, Invalid> {
        let pb::OpeningSlice {
            source,
            seed,
            offset,
            count,
            per_game,
        } = o;
        let slice = OpeningSlice {
            source: OpeningSource::from_wire(source, "openings")?,
            seed,
            offset,
            count,
            per_game,
        };
        slice.validate()?;
        Ok(slice)
    }
}

impl From<Adjudication> for pb::Adjudication {
    fn from(a: Adjudication) -> Self {
        let Adjudication {
            resign_cp,
            resign_moves,
            draw_cp,
            draw_moves,
            draw_after_move,
            max_plies,
        } = a;
        pb::Adjudication {
            resign_cp,
            resign_moves,
            draw_cp,
            draw_moves,
            draw_after_move,
            max_plies,
        }
    }
}

/// Every combination of values is meaningful, so this cannot fail.
impl From<pb::Adjudication> for Adjudication {
    fn from(a: pb::Adjudication) -> Self {
        let pb::Adjudication {
            resign_cp,
            resign_moves,
            draw_cp,
            draw_moves,
            draw_after_move,
            max_plies,
        } = a;
        Adjudication {
            resign_cp,
            resign_moves,
            draw_cp,
            draw_moves,
            draw_after_move,
            max_plies,
        }
    }
}

impl From<Totals> for pb::Totals {
    fn from(t: Totals) -> Self {
        let Totals {
            pairs,
            pentanomial: Pentanomial(pentanomial),
            wdl:
                Wdl {
                    wins,
                    draws,
                    losses,
                },
            reasons,
            total_plies,
        } = t;
        pb::Totals {
            pairs,
            pentanomial: pentanomial.to_vec(),
            wins,
            draws,
            losses,
            reasons: reasons.into_iter().collect(),
            total_plies,
        }
    }
}

impl Totals {
    /// The record of a message whose field is called `field` (shape only:
    /// whether the counts fit is [`Totals::check`]'s job).
    pub fn from_wire(t: Option<pb::Totals>, field: &str) -> Result<Self, Invalid> {
        let pb::Totals {
            pairs,
            pentanomial,
            wins,
            draws,
            losses,
            reasons,
            total_plies,
        } = required(field, t)?;
        let pentanomial: [u64; 5] = pentanomial.try_into().map_err(|p: Vec<u64>| {
            Invalid::new(
                format!("{field}.pentanomial"),
                format!("{} entries, need 5", p.len()),
            )
        })?;
        Ok(Totals {
            pairs,
            pentanomial: Pentanomial(pentanomial),
            wdl: Wdl {
                wins,
                draws,
                losses,
            },
            reasons: reasons.into_iter().collect(),
            total_plies,
        })
    }
}

impl From<BatchOutcome> for pb::GameResults {
    fn from(o: BatchOutcome) -> Self {
        let BatchOutcome {
            totals,
            games,
            variant,
        } = o;
        pb::GameResults {
            totals: Some(totals.into()),
            games: games.into_iter().map(Into::into).collect(),
            variant: variant.map(Into::into),
        }
    }
}

/// Checks the shape (5 pentanomial entries, known enums); whether the counts
/// fit a lease is [`BatchOutcome::check`]'s job, since only the coordinator
/// knows the lease.
impl TryFrom<pb::GameResults> for BatchOutcome {
    type Error = Invalid;

    fn try_from(r: pb::GameResults) -> Result<Self, Invalid> {
        let pb::GameResults {
            totals,
            games,
            variant,
        } = r;
        Ok(BatchOutcome {
            totals: Totals::from_wire(totals, "results")?,
            games: games
                .into_iter()
                .map(GameRecord::try_from)
                .collect::<Result<_, _>>()?,
            variant: variant.map(VariantStats::try_from).transpose()?,
        })
    }
}

impl From<VariantStats> for pb::VariantStats {
    fn from(s: VariantStats) -> Self {
        let VariantStats {
            red_wins,
            draws,
            black_wins,
            pair_outcomes,
            plies_histogram,
            captured,
            converted,
            games_with_conversion,
        } = s;
        pb::VariantStats {
            red_wins,
            draws,
            black_wins,
            pair_outcomes: pair_outcomes.to_vec(),
            plies_histogram: plies_histogram.to_vec(),
            captured: captured.to_vec(),
            converted: converted.to_vec(),
            games_with_conversion: games_with_conversion.to_vec(),
        }
    }
}

fn fixed<const N: usize>(field: &str, v: Vec<u64>) -> Result<[u64; N], Invalid> {
    v.try_into()
        .map_err(|v: Vec<u64>| Invalid::new(field, format!("{} entries, need {N}", v.len())))
}

/// Checks the shape (entry counts); whether the counts add up is
/// [`VariantStats::check`]'s job.
impl TryFrom<pb::VariantStats> for VariantStats {
    type Error = Invalid;

    fn try_from(s: pb::VariantStats) -> Result<Self, Invalid> {
        let pb::VariantStats {
            red_wins,
            draws,
            black_wins,
            pair_outcomes,
            plies_histogram,
            captured,
            converted,
            games_with_conversion,
        } = s;
        Ok(VariantStats {
            red_wins,
            draws,
            black_wins,
            pair_outcomes: fixed("results.variant.pair_outcomes", pair_outcomes)?,
            plies_histogram: fixed("results.variant.plies_histogram", plies_histogram)?,
            captured: fixed("results.variant.captured", captured)?,
            converted: fixed("results.variant.converted", converted)?,
            games_with_conversion: fixed(
                "results.variant.games_with_conversion",
                games_with_conversion,
            )?,
        })
    }
}

impl From<GameResult> for pb::GameResult {
    fn from(r: GameResult) -> Self {
        match r {
            GameResult::Red => pb::GameResult::RedWins,
            GameResult::Draw => pb::GameResult::Draw,
            GameResult::Black => pb::GameResult::BlackWins,
        }
    }
}

impl From<Retention> for pb::GameRetention {
    fn from(r: Retention) -> Self {
        match r {
            Retention::All => pb::GameRetention::All,
            Retention::Decisive => pb::GameRetention::Decisive,
            Retention::Failures => pb::GameRetention::Failures,
            Retention::None => pb::GameRetention::None,
        }
    }
}

impl Retention {
    /// The retention of a wire value at `field`; unspecified is the default,
    /// [`Retention::All`].
    pub fn from_wire(value: i32, field: &str) -> Result<Self, Invalid> {
        match pb::GameRetention::try_from(value) {
            Ok(pb::GameRetention::Unspecified | pb::GameRetention::All) => Ok(Retention::All),
            Ok(pb::GameRetention::Decisive) => Ok(Retention::Decisive),
            Ok(pb::GameRetention::Failures) => Ok(Retention::Failures),
            Ok(pb::GameRetention::None) => Ok(Retention::None),
            Err(_) => invalid(field, format!("unknown value {value}")),
        }
    }
}

impl From<GameRecord> for pb::GameRecord {
    fn from(g: GameRecord) -> Self {
        let GameRecord {
            opening_index,
            start_fen,
            moves,
            opening_plies,
            result,
            reason,
            red_player,
            per_move,
            stderr_tail,
            overrun_ms,
        } = g;
        pb::GameRecord {
            opening_index,
            start_fen,
            moves: pack_moves(&moves),
            opening_plies,
            result: pb::GameResult::from(result).into(),
            reason: reason.token().to_owned(),
            red_player: red_player.into(),
            score_cp: per_move.iter().map(|m| m.score_cp).collect(),
            depth: per_move.iter().map(|m| m.depth).collect(),
            nodes: per_move.iter().map(|m| m.nodes).collect(),
            time_ms: per_move.iter().map(|m| m.time_ms).collect(),
            stderr_tail,
            overrun_ms,
        }
    }
}

impl TryFrom<pb::GameRecord> for GameRecord {
    type Error = Invalid;

    fn try_from(g: pb::GameRecord) -> Result<Self, Invalid> {
        let pb::GameRecord {
            opening_index,
            start_fen,
            moves,
            opening_plies,
            result,
            reason,
            red_player,
            score_cp,
            depth,
            nodes,
            time_ms,
            stderr_tail,
            overrun_ms,
        } = g;
        let result = match pb::GameResult::try_from(result) {
            Ok(pb::GameResult::RedWins) => GameResult::Red,
            Ok(pb::GameResult::Draw) => GameResult::Draw,
            Ok(pb::GameResult::BlackWins) => GameResult::Black,
            Ok(pb::GameResult::Unspecified) | Err(_) => {
                return invalid("game.result", format!("unknown value {result}"));
            }
        };
        let reason = Reason::from_token(&reason).ok_or_else(|| {
            Invalid::new(
                "game.reason",
                format!("unknown end reason {}", quote(&reason)),
            )
        })?;
        let moves = unpack_moves(&moves)
            .ok_or_else(|| Invalid::new("game.moves", "not a list of 2-byte moves"))?;
        let n = score_cp.len();
        if depth.len() != n || nodes.len() != n || time_ms.len() != n {
            return invalid(
                "game.score_cp/depth/nodes/time_ms",
                "the per-move lists differ in length",
            );
        }
        let per_move = (0..n)
            .map(|i| MoveStats {
                score_cp: score_cp[i],
                depth: depth[i],
                nodes: nodes[i],
                time_ms: time_ms[i],
            })
            .collect();
        let record = GameRecord {
            opening_index,
            start_fen,
            moves,
            opening_plies,
            result,
            reason,
            red_player: u8::try_from(red_player).unwrap_or(u8::MAX),
            per_move,
            stderr_tail,
            overrun_ms,
        };
        record.validate()?;
        Ok(record)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn work_round_trips_through_the_wire() {
        let work = WorkSpec::example();
        let wire = pb::WorkSpec::from(work.clone());
        assert_eq!(WorkSpec::try_from(wire).unwrap(), work);
    }

    #[test]
    fn garbled_work_names_the_field() {
        let mut wire = pb::WorkSpec::from(WorkSpec::example());
        wire.players.pop();
        let err = WorkSpec::try_from(wire).unwrap_err();
        assert_eq!(err.field, "work.players");
        assert_eq!(
            tonic::Status::from(err).code(),
            tonic::Code::InvalidArgument
        );

        let mut wire = pb::WorkSpec::from(WorkSpec::example());
        wire.players[1].limit = Some(pb::Limit { kind: None });
        assert_eq!(WorkSpec::try_from(wire).unwrap_err().field, "limit.kind");

        let mut wire = pb::WorkSpec::from(WorkSpec::example());
        wire.rules = "standard+chess".to_owned();
        assert_eq!(WorkSpec::try_from(wire).unwrap_err().field, "work.rules");

        let mut wire = pb::WorkSpec::from(WorkSpec::example());
        wire.adjudication = None;
        assert_eq!(
            WorkSpec::try_from(wire).unwrap_err().field,
            "work.adjudication"
        );
    }

    #[test]
    fn outcome_counts_must_fit_the_lease() {
        let outcome = BatchOutcome {
            totals: Totals {
                pairs: 2,
                pentanomial: Pentanomial([0, 0, 1, 1, 0]),
                wdl: Wdl {
                    wins: 2,
                    draws: 1,
                    losses: 1,
                },
                reasons: BTreeMap::from([("checkmate".to_owned(), 4)]),
                total_plies: 0,
            },
            games: vec![
                GameRecord {
                    opening_index: 0,
                    start_fen: xq_engine::START_FEN.to_owned(),
                    moves: Vec::new(),
                    opening_plies: 0,
                    result: xq_engine::rules::GameResult::Red,
                    reason: Reason::Checkmate,
                    red_player: 0,
                    per_move: Vec::new(),
                    stderr_tail: String::new(),
                    overrun_ms: None,
                };
                4
            ],
            variant: None,
        };
        assert_eq!(outcome.check(2), Ok(()));
        let field = |o: &BatchOutcome| o.check(2).unwrap_err().field;
        let mut unproven = outcome.clone();
        unproven.games.pop();
        assert_eq!(field(&unproven), "results.games");
        unproven.games.clear();
        assert_eq!(field(&unproven), "results.games");
        assert_eq!(outcome.check(3).unwrap_err().field, "results.pairs");
        let mut bad = outcome.clone();
        bad.totals.wdl.wins = 3;
        assert_eq!(field(&bad), "results.wins/draws/losses");
        bad.totals.wdl.wins = u64::MAX;
        bad.totals.wdl.draws = 5;
        assert_eq!(field(&bad), "results.wins/draws/losses");
        let mut long = outcome.clone();
        long.totals.total_plies = 40_001;
        assert_eq!(field(&long), "results.total_plies");
        let mut odd = outcome.clone();
        odd.totals.reasons = BTreeMap::from([(String::new(), 4)]);
        assert_eq!(field(&odd), "results.reasons");
        let mut wire = pb::GameResults::from(outcome);
        if let Some(t) = wire.totals.as_mut() {
            t.pentanomial = vec![1, 2];
        }
        let err = BatchOutcome::try_from(wire).unwrap_err();
        assert_eq!(err.field, "results.pentanomial");
    }

    #[test]
    fn game_records_pack_moves_in_two_bytes_and_check_their_lists() {
        let moves: Vec<_> = ["h2e2", "h9g7", "h0g2"]
            .iter()
            .map(|m| xq_engine::Move::parse_coords(m).unwrap())
            .collect();
        let record = GameRecord {
            opening_index: 5,
            start_fen: xq_engine::START_FEN.to_owned(),
            moves,
            opening_plies: 1,
            result: GameResult::Black,
            reason: Reason::Checkmate,
            red_player: 1,
            per_move: vec![MoveStats::default(); 2],
            stderr_tail: String::new(),
            overrun_ms: None,
        };
        let wire = pb::GameRecord::from(record.clone());
        assert_eq!(wire.moves.len(), 6);
        assert_eq!(GameRecord::try_from(wire.clone()).unwrap(), record);
        let mut short = wire.clone();
        short.depth.pop();
        assert!(GameRecord::try_from(short).is_err());
        let mut odd = wire.clone();
        odd.moves.pop();
        assert_eq!(GameRecord::try_from(odd).unwrap_err().field, "game.moves");
        let mut stats = wire;
        for list in [&mut stats.depth, &mut stats.time_ms] {
            list.pop();
        }
        stats.score_cp.pop();
        stats.nodes.pop();
        assert_eq!(
            GameRecord::try_from(stats).unwrap_err().field,
            "game.per_move"
        );
        let forfeit = GameRecord {
            reason: Reason::TimeForfeit,
            overrun_ms: Some(37),
            ..record.clone()
        };
        let wire = pb::GameRecord::from(forfeit.clone());
        assert_eq!(wire.overrun_ms, Some(37));
        assert_eq!(GameRecord::try_from(wire.clone()).unwrap(), forfeit);
        let mut mate = wire.clone();
        mate.reason = "checkmate".to_owned();
        assert_eq!(
            GameRecord::try_from(mate).unwrap_err().field,
            "game.overrun_ms"
        );
        let mut unknown = wire;
        unknown.reason = "r".repeat(100_000);
        let err = GameRecord::try_from(unknown).unwrap_err();
        assert_eq!(err.field, "game.reason");
        assert!(err.reason.contains("(100000 bytes)"), "{}", err.reason);
        assert!(err.reason.len() < 100, "{} bytes", err.reason.len());
    }

    fn source_engine() -> EngineRef {
        EngineRef {
            name: "engine@main".to_owned(),
            sha256: String::new(),
            size: 0,
            signature: Some(Signature::Bench(123_456)),
            protocol: Protocol::Uci,
            options: BTreeMap::new(),
            coords: None,
            binaries: Vec::new(),
            source: Some(EngineSource {
                repo: "https://example.org/engine.git".to_owned(),
                commit: "0123456789abcdef0123456789abcdef01234567".to_owned(),
                git_ref: Some("main".to_owned()),
                build: "make -j2 ARCH=$ARCH".to_owned(),
                binary: "src/engine".to_owned(),
                needs: vec!["make".to_owned(), "g++".to_owned()],
            }),
        }
    }

    #[test]
    fn a_source_engine_round_trips_and_needs_exactly_one_executable_or_source() {
        let engine = source_engine();
        let wire = pb::EngineRef::from(engine.clone());
        assert_eq!(EngineRef::try_from(wire.clone()).unwrap(), engine);
        let field = |w: pb::EngineRef| EngineRef::try_from(w).unwrap_err().field;
        let mut both = wire.clone();
        both.sha256 = "a".repeat(64);
        assert_eq!(field(both), "engine.sha256");
        let mut neither = wire.clone();
        neither.source = None;
        assert_eq!(field(neither), "engine.sha256");
        let mut unsigned = wire.clone();
        unsigned.signature = None;
        assert_eq!(EngineRef::try_from(unsigned).unwrap().signature, None);
        let mut searched = wire.clone();
        searched.signature_depth = 6;
        assert_eq!(
            EngineRef::try_from(searched).unwrap().signature,
            Some(Signature::Search {
                depth: 6,
                nodes: 123_456
            })
        );
        let mut zero = wire.clone();
        zero.signature = Some(0);
        assert_eq!(field(zero), "engine.signature");
        let mut depth_alone = wire.clone();
        depth_alone.signature = None;
        depth_alone.signature_depth = 3;
        assert_eq!(field(depth_alone), "engine.signature_depth");
        let mut branch = wire.clone();
        if let Some(s) = branch.source.as_mut() {
            s.commit = String::new();
        }
        assert_eq!(
            field(branch.clone()),
            "engine.source.commit",
            "a lease's source is resolved"
        );
        EngineRef::source_request(branch.clone()).expect("a request may name a branch");
        if let Some(s) = branch.source.as_mut() {
            s.git_ref.clear();
        }
        assert_eq!(
            EngineRef::source_request(branch).unwrap_err().field,
            "engine.source.commit"
        );
    }

    #[test]
    fn a_source_from_the_wire_names_its_bad_field() {
        let field = |edit: &dyn Fn(&mut pb::EngineSource)| {
            let mut wire = pb::EngineRef::from(source_engine());
            edit(wire.source.as_mut().unwrap());
            EngineRef::source_request(wire).unwrap_err()
        };
        let e = field(&|s| s.repo = "ext::sh -c evil".to_owned());
        assert_eq!(e.field, "engine.source.repo");
        assert_eq!(
            field(&|s| s.repo = "https://a b".to_owned()).field,
            "engine.source.repo"
        );
        assert_eq!(
            field(&|s| s.repo = "https://".to_owned()).field,
            "engine.source.repo"
        );
        let long = format!("https://{}", "x".repeat(600));
        let e = field(&|s| s.repo = long.clone());
        assert!(e.reason.contains("(608 bytes)"), "{e}");
        assert_eq!(
            field(&|s| s.git_ref = "-x".to_owned()).field,
            "engine.source.git_ref"
        );
        assert_eq!(
            field(&|s| s.commit = "ABC".to_owned()).field,
            "engine.source.commit"
        );
        assert_eq!(
            field(&|s| s.build = " ".to_owned()).field,
            "engine.source.build"
        );
        assert_eq!(
            field(&|s| s.build = "make\0".to_owned()).field,
            "engine.source.build"
        );
        let huge = "m".repeat(2000);
        assert_eq!(
            field(&|s| s.build = huge.clone()).field,
            "engine.source.build"
        );
        for bad in ["", "/bin/sh", "../engine", "src/../../x", "a\nb"] {
            assert_eq!(
                field(&|s| s.binary = bad.to_owned()).field,
                "engine.source.binary",
                "{bad:?}"
            );
        }
        let e = field(&|s| s.needs = vec!["rm".to_owned()]);
        assert!(
            e.field == "engine.source.needs" && e.reason.contains("\"rm\""),
            "{e}"
        );
        let e = field(&|s| s.needs = vec!["make".to_owned(), "make".to_owned()]);
        assert!(e.reason.contains("twice"), "{e}");
        let mut with_options = pb::EngineRef::from(source_engine());
        with_options
            .options
            .insert("Hash".to_owned(), "16".to_owned());
        assert_eq!(
            EngineRef::source_request(with_options).unwrap_err().field,
            "engine.options"
        );
    }

    #[test]
    fn a_failed_build_report_is_bounded() {
        let report = crate::engine_source::FailedBuild {
            commit: "0123456789abcdef0123456789abcdef01234567".to_owned(),
            reason: "build command exited with status 2".to_owned(),
            log_tail: "main.cpp:3: error".to_owned(),
        };
        report.validate().unwrap();
        let bad = |edit: &dyn Fn(&mut crate::engine_source::FailedBuild)| {
            let mut r = report.clone();
            edit(&mut r);
            r.validate().unwrap_err().field
        };
        assert_eq!(bad(&|r| r.commit = "main".to_owned()), "commit");
        assert_eq!(bad(&|r| r.reason = String::new()), "reason");
        assert_eq!(bad(&|r| r.reason = "two\nlines".to_owned()), "reason");
        assert_eq!(bad(&|r| r.log_tail = "x".repeat(8193)), "log_tail");
    }

    #[test]
    fn an_upload_header_names_a_sha256_and_at_most_a_gib() {
        let header = BlobHeader {
            sha256: "0a".repeat(32),
            size: crate::blob::MAX_UPLOAD_BYTES,
            purpose: UploadPurpose::Engine("dev".to_owned()),
        };
        let wire = pb::UploadHeader::from(header.clone());
        assert_eq!(BlobHeader::try_from(wire.clone()).unwrap(), header);
        for purpose in [
            UploadPurpose::Asset("nn.bin".to_owned()),
            UploadPurpose::WorkerRelease,
        ] {
            let h = BlobHeader {
                purpose,
                ..header.clone()
            };
            assert_eq!(
                BlobHeader::try_from(pb::UploadHeader::from(h.clone())).unwrap(),
                h
            );
        }
        for (purpose, field) in [
            (None, "header.purpose"),
            (Some(pb::UploadPurpose { what: None }), "header.purpose"),
            (
                Some(pb::UploadPurpose {
                    what: Some(pb::upload_purpose::What::Engine(String::new())),
                }),
                "header.purpose.engine",
            ),
            (
                Some(pb::UploadPurpose {
                    what: Some(pb::upload_purpose::What::Asset("a".repeat(129))),
                }),
                "header.purpose.asset",
            ),
        ] {
            let bad = pb::UploadHeader {
                purpose,
                ..wire.clone()
            };
            assert_eq!(BlobHeader::try_from(bad).unwrap_err().field, field);
        }
        let big = pb::UploadHeader {
            size: crate::blob::MAX_UPLOAD_BYTES + 1,
            ..wire.clone()
        };
        assert_eq!(BlobHeader::try_from(big).unwrap_err().field, "header.size");
        for sha in ["0A".repeat(32), "0a".repeat(31), String::new()] {
            let bad = pb::UploadHeader {
                sha256: sha,
                ..wire.clone()
            };
            assert_eq!(
                BlobHeader::try_from(bad).unwrap_err().field,
                "header.sha256"
            );
        }
    }

    #[test]
    fn retention_round_trips_and_unspecified_means_all() {
        for r in Retention::ALL {
            let wire = pb::GameRetention::from(r) as i32;
            assert_eq!(Retention::from_wire(wire, "spec.keep_games"), Ok(r));
        }
        assert_eq!(
            Retention::from_wire(0, "spec.keep_games"),
            Ok(Retention::All)
        );
        let err = Retention::from_wire(99, "spec.keep_games").unwrap_err();
        assert_eq!(err.field, "spec.keep_games");
    }

    fn engine_with_builds() -> EngineRef {
        EngineRef {
            name: "pikafish".to_owned(),
            sha256: String::new(),
            size: 0,
            signature: Some(Signature::Bench(77)),
            protocol: Protocol::Uci,
            options: BTreeMap::new(),
            coords: None,
            source: None,
            binaries: vec![
                EngineBinary {
                    arch: Arch::X86_64Avx2,
                    sha256: "a".repeat(64),
                    size: 10,
                },
                EngineBinary {
                    arch: Arch::Armv8Dotprod,
                    sha256: "b".repeat(64),
                    size: 11,
                },
            ],
        }
    }

    #[test]
    fn tagged_builds_round_trip_and_bad_ones_name_the_field() {
        let engine = engine_with_builds();
        let wire = pb::EngineRef::from(engine.clone());
        assert_eq!(wire.binaries[1].arch, "armv8-dotprod");
        assert_eq!(EngineRef::try_from(wire.clone()).unwrap(), engine);

        let mut unknown = wire.clone();
        unknown.binaries[0].arch = "x86-64-modern".to_owned();
        let err = EngineRef::try_from(unknown).unwrap_err();
        assert_eq!(err.field, "engine.binaries.arch");
        assert!(err.reason.contains("\"x86-64-modern\""), "{}", err.reason);

        let mut twice = wire.clone();
        twice.binaries[1].arch = "x86-64-avx2".to_owned();
        let err = EngineRef::try_from(twice).unwrap_err();
        assert!(err.reason.contains("x86-64-avx2 twice"), "{}", err.reason);

        let mut none = wire.clone();
        none.binaries.clear();
        assert_eq!(
            EngineRef::try_from(none).unwrap_err().field,
            "engine.sha256",
            "an engine needs an executable"
        );

        let mut bad_sha = wire.clone();
        bad_sha.binaries[0].sha256 = "XYZ".to_owned();
        assert_eq!(
            EngineRef::try_from(bad_sha).unwrap_err().field,
            "engine.binaries.sha256"
        );

        let mut many = wire;
        many.binaries = vec![many.binaries[0].clone(); 13];
        assert_eq!(
            EngineRef::try_from(many).unwrap_err().field,
            "engine.binaries"
        );
    }

    fn server() -> Machine {
        Machine {
            cpu_model: "Intel(R) Xeon(R) Platinum 8480+".to_owned(),
            isa: "x86_64".to_owned(),
            flags: "popcnt,avx2,bmi2,avx512,vnni".parse().unwrap(),
            cores: 112,
            memory_mib: 515_000,
        }
    }

    #[test]
    fn a_machine_round_trips_and_unknown_flags_are_left_out() {
        let machine = server();
        let wire = pb::Machine::from(machine.clone());
        assert_eq!(wire.flags, ["popcnt", "avx2", "bmi2", "avx512", "vnni"]);
        assert_eq!(Machine::try_from(wire.clone()).unwrap(), machine);
        let mut newer = wire;
        newer.flags.push("avx10_2".to_owned());
        assert_eq!(Machine::try_from(newer).unwrap(), machine);
    }

    #[test]
    fn a_garbled_machine_names_the_field() {
        let wire = pb::Machine::from(server());
        let refused = |change: &dyn Fn(&mut pb::Machine)| {
            let mut m = wire.clone();
            change(&mut m);
            Machine::try_from(m).unwrap_err()
        };
        let err = refused(&|m| m.flags.push("AVX2".to_owned()));
        assert_eq!(err.field, "machine.flags");
        assert!(err.reason.contains("\"AVX2\""), "{}", err.reason);
        let err = refused(&|m| m.flags = vec!["popcnt".to_owned(); 65]);
        assert!(err.reason.contains("65 names"), "{}", err.reason);
        let err = refused(&|m| m.flags.push("x".repeat(33)));
        assert_eq!(err.field, "machine.flags");
        let err = refused(&|m| m.cpu_model = "m".repeat(129));
        assert_eq!(err.field, "machine.cpu_model");
        assert!(err.reason.contains("(129 bytes)"), "{}", err.reason);
        let err = refused(&|m| m.cpu_model = "Xeon\u{1b}[31m".to_owned());
        assert_eq!(err.field, "machine.cpu_model");
        assert_eq!(refused(&|m| m.isa.clear()).field, "machine.isa");
        assert_eq!(
            refused(&|m| m.isa = "x86-64".to_owned()).field,
            "machine.isa"
        );
        assert_eq!(refused(&|m| m.cores = 0).field, "machine.cores");
    }
}
