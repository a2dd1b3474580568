//! An engine's signature: what every worker measures of its build before it
//! plays it, so that all of a run's workers play the same engine.
//!
//! The kind is declared once per engine (`engine add`) or source engine (a
//! run's `--dev-signature`), by what the engine can give: the node count of
//! its `bench` command, or, for an engine without one (ElephantEye), the
//! node count of a fixed search. An engine may also have none
//! (`EngineRef::signature` is `None`): workers then check its executable's
//! SHA-256 only, which proves the bytes but not that the build searches the
//! same way on every machine (a source engine without a signature is built
//! by each worker, so two compilers may give two engines unnoticed).

use serde::{Deserialize, Serialize};

use crate::error::{Invalid, invalid};

/// Deepest fixed search a signature may ask for: the search runs on every
/// worker before it plays, and its node count grows with the depth.
pub const MAX_SIGNATURE_DEPTH: u32 = 20;

/// What a worker's measurement of an engine must equal. Stored JSON: a
/// bench count as a bare number (as before fixed searches existed), a fixed
/// search as `{"depth": D, "nodes": N}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Signature {
    /// The `Nodes searched` count its `bench` prints; at least 1.
    Bench(u64),
    /// The sum, over the first `SIGNATURE_POSITIONS` of the built-in
    /// engine's bench positions, of the last `info … nodes N` the engine
    /// prints for `go depth {depth}` from that position after a new game,
    /// with one thread and a fixed hash (the worker's `signature` module);
    /// `depth` 1 to [`MAX_SIGNATURE_DEPTH`], `nodes` at least 1.
    Search { depth: u32, nodes: u64 },
}

impl Signature {
    /// The node count to match, whatever the kind.
    pub fn nodes(self) -> u64 {
        match self {
            Signature::Bench(n) | Signature::Search { nodes: n, .. } => n,
        }
    }

    /// The fixed search's depth; `None` for a bench count.
    pub fn depth(self) -> Option<u32> {
        match self {
            Signature::Bench(_) => None,
            Signature::Search { depth, .. } => Some(depth),
        }
    }

    /// From the wire's `signature` count and `signature_depth` (0: a bench
    /// count); a depth without a count, a count of 0 or a depth past
    /// [`MAX_SIGNATURE_DEPTH`] is refused, naming `field`.
    pub fn from_wire(
        count: Option<u64>,
        depth: u32,
        field: &str,
    ) -> Result<Option<Signature>, Invalid> {
        let signature = match (count, depth) {
            (None, 0) => return Ok(None),
            (None, d) => {
                return invalid(
                    format!("{field}_depth"),
                    format!("{d} without a node count: a fixed search's signature is its nodes"),
                );
            }
            (Some(n), 0) => Signature::Bench(n),
            (Some(n), d) => Signature::Search { depth: d, nodes: n },
        };
        signature.validate(field)?;
        Ok(Some(signature))
    }

    /// The wire's `(signature, signature_depth)`.
    pub fn to_wire(signature: Option<Signature>) -> (Option<u64>, u32) {
        match signature {
            None => (None, 0),
            Some(s) => (Some(s.nodes()), s.depth().unwrap_or(0)),
        }
    }

    /// At least one node, and a depth of 1 to [`MAX_SIGNATURE_DEPTH`].
    pub fn validate(self, field: &str) -> Result<(), Invalid> {
        if self.nodes() == 0 {
            return invalid(field, "0 nodes sign nothing: a signature is at least 1");
        }
        if let Some(d) = self.depth()
            && !(1..=MAX_SIGNATURE_DEPTH).contains(&d)
        {
            return invalid(
                format!("{field}_depth"),
                format!("{d}: a fixed search's depth is 1 to {MAX_SIGNATURE_DEPTH}"),
            );
        }
        Ok(())
    }

    /// As `engine list`, reports and the web view show it: `bench 123456`
    /// or `depth 8 search 98765`.
    pub fn text(signature: Option<Signature>) -> String {
        match signature {
            None => "none (SHA-256 only)".to_owned(),
            Some(Signature::Bench(n)) => n.to_string(),
            Some(Signature::Search { depth, nodes }) => format!("{nodes} (go depth {depth})"),
        }
    }

    /// Parses a declared signature: `bench:N`, `depth:D:N` (the nodes of a
    /// fixed search of depth D) or `none`.
    pub fn parse(text: &str) -> Result<Option<Signature>, SignatureError> {
        let bad = || SignatureError(crate::quote(text));
        let number = |s: &str| s.trim().parse::<u64>().map_err(|_| bad());
        let parts: Vec<&str> = text.trim().split(':').collect();
        let signature = match parts.as_slice() {
            ["none"] => return Ok(None),
            ["bench", n] => Signature::Bench(number(n)?),
            ["depth", d, n] => Signature::Search {
                depth: u32::try_from(number(d)?).map_err(|_| bad())?,
                nodes: number(n)?,
            },
            _ => return Err(bad()),
        };
        signature.validate("signature").map_err(|_| bad())?;
        Ok(Some(signature))
    }
}

/// A declared signature that is none of `bench:N`, `depth:D:N`, `none`.
#[derive(Debug, thiserror::Error)]
#[error(
    "bad signature {0}: expected bench:N (N ≥ 1, the node count the engine's bench prints), \
     depth:D:N (the nodes of a fixed search of depth 1 to {MAX_SIGNATURE_DEPTH}) or none"
)]
pub struct SignatureError(String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_parses_and_bad_ones_are_refused_naming_the_text() {
        assert_eq!(
            Signature::parse("bench:42").unwrap(),
            Some(Signature::Bench(42))
        );
        assert_eq!(
            Signature::parse("depth:6:140456").unwrap(),
            Some(Signature::Search {
                depth: 6,
                nodes: 140_456
            })
        );
        assert_eq!(Signature::parse("none").unwrap(), None);
        for bad in [
            "bench:0",
            "depth:0:5",
            "depth:21:5",
            "bench",
            "nodes:4",
            "depth:4",
        ] {
            let err = Signature::parse(bad).unwrap_err().to_string();
            assert!(err.contains(bad), "{err}");
        }
    }

    #[test]
    fn the_wire_form_round_trips_and_refuses_a_depth_without_nodes() {
        for s in [
            None,
            Some(Signature::Bench(7)),
            Some(Signature::Search { depth: 3, nodes: 9 }),
        ] {
            let (count, depth) = Signature::to_wire(s);
            assert_eq!(
                Signature::from_wire(count, depth, "engine.signature").unwrap(),
                s
            );
        }
        let err = Signature::from_wire(None, 4, "engine.signature").unwrap_err();
        assert_eq!(err.field, "engine.signature_depth");
        let err = Signature::from_wire(Some(0), 0, "engine.signature").unwrap_err();
        assert_eq!(err.field, "engine.signature");
        let err = Signature::from_wire(Some(5), 99, "engine.signature").unwrap_err();
        assert_eq!(err.field, "engine.signature_depth");
    }

    #[test]
    fn stored_json_keeps_a_bench_count_a_bare_number() {
        assert_eq!(serde_json::to_string(&Signature::Bench(12)).unwrap(), "12");
        assert_eq!(
            serde_json::from_str::<Signature>("12").unwrap(),
            Signature::Bench(12)
        );
        let search = Signature::Search {
            depth: 2,
            nodes: 30,
        };
        let text = serde_json::to_string(&search).unwrap();
        assert_eq!(text, r#"{"depth":2,"nodes":30}"#);
        assert_eq!(serde_json::from_str::<Signature>(&text).unwrap(), search);
    }
}
