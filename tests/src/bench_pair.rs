//! The benches' result: one real pair of the built-in engine's games, and a
//! lease's result made of copies of it.

use std::sync::Arc;

use std::marker::PhantomData;

use anyhow::ensure;
use prost::Message;
use prost::bytes::BufMut;
use tonic::Status;
use tonic::codec::{Codec, EncodeBuf, Encoder};
use tonic::codegen::Bytes;
use tonic_prost::ProstDecoder;
use xq_proto::pb;

/// The only opening of the bench's run: every opening index is this line.
pub const BENCH_OPENING: &str =
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 moves h2e2 h9g7";

/// One real pair played by the game runner, as a worker would submit it.
pub fn real_pair() -> anyhow::Result<pb::GameResults> {
    use xq_worker::BatchPlayer;
    let mut work = xq_proto::WorkSpec::example();
    work.pairs = 1;
    work.openings.count = 1;
    work.openings.offset = 0;
    work.openings.source = xq_proto::OpeningSource::Lines {
        lines: vec![BENCH_OPENING.to_owned()],
        random_plies: 0,
    };
    for p in &mut work.players {
        p.limit = xq_proto::Limit::Nodes(300);
        p.hash_mb = 1;
    }
    let player = xq_worker::EnginePlayer::new(1)?;
    let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let outcome = player.play(&work, &cancel, &|_| {})?;
    ensure!(
        outcome.games.len() == 2,
        "the pair has {} games",
        outcome.games.len()
    );
    Ok(outcome.into())
}

/// The results of a lease of `pairs` pairs from opening `offset`: every
/// pair a copy of `pair` (whose opening is the run's only line, so it is
/// every index's), its games' opening index that pair's, the totals and
/// the per-colour statistics `pairs` times the pair's.
pub fn results_for(pair: &pb::GameResults, pairs: u32, offset: u64) -> pb::GameResults {
    let n = u64::from(pairs);
    let games = (0..n)
        .flat_map(|p| {
            pair.games.iter().map(move |g| pb::GameRecord {
                opening_index: offset + p,
                ..g.clone()
            })
        })
        .collect();
    pb::GameResults {
        games,
        ..counts_for(pair, n)
    }
}

/// `pair`'s totals and per-colour statistics `n` times, without games.
fn counts_for(pair: &pb::GameResults, n: u64) -> pb::GameResults {
    let times = |counts: &[u64]| -> Vec<u64> { counts.iter().map(|c| c * n).collect() };
    let totals = pair.totals.as_ref().map(|t| pb::Totals {
        pairs: t.pairs * n,
        pentanomial: times(&t.pentanomial),
        wins: t.wins * n,
        draws: t.draws * n,
        losses: t.losses * n,
        reasons: t.reasons.iter().map(|(k, v)| (k.clone(), v * n)).collect(),
        total_plies: t.total_plies * n,
    });
    let variant = pair.variant.as_ref().map(|v| pb::VariantStats {
        red_wins: v.red_wins * n,
        draws: v.draws * n,
        black_wins: v.black_wins * n,
        pair_outcomes: times(&v.pair_outcomes),
        plies_histogram: times(&v.plies_histogram),
        captured: times(&v.captured),
        converted: times(&v.converted),
        games_with_conversion: times(&v.games_with_conversion),
    });
    pb::GameResults {
        totals,
        games: Vec::new(),
        variant,
    }
}

/// A lease's `SubmitResultRequest` as bytes, built from the pair's games
/// encoded once: the bytes prost writes for the request with
/// [`results_for`]'s results, at the cost of copying each game instead of
/// encoding its thousand varints. The load bench's simulated workers send
/// these ([`PreEncoded`]), so that the two cores it shares with the
/// coordinator go to the coordinator.
#[derive(Debug, Clone)]
pub struct EncodedPair {
    pair: pb::GameResults,
    /// Each game of the pair encoded with opening index 0 (which prost
    /// omits: the index is written before it, as field 1 comes first).
    games: Vec<Vec<u8>>,
}

impl EncodedPair {
    pub fn new(pair: &pb::GameResults) -> Self {
        let games = pair
            .games
            .iter()
            .map(|g| {
                pb::GameRecord {
                    opening_index: 0,
                    ..g.clone()
                }
                .encode_to_vec()
            })
            .collect();
        EncodedPair {
            pair: pair.clone(),
            games,
        }
    }

    /// The request for lease `lease_id` of worker `worker_id`: `pairs`
    /// pairs from opening `offset`.
    pub fn request(&self, worker_id: u64, lease_id: u64, pairs: u32, offset: u64) -> Bytes {
        use prost::encoding::{WireType, encode_key, encode_varint, encoded_len_varint, key_len};
        let counts = counts_for(&self.pair, u64::from(pairs));
        let index_len = |index: u64| match index {
            0 => 0,
            i => key_len(1) + encoded_len_varint(i),
        };
        let game_len = |index: u64, game: &[u8]| {
            let body = index_len(index) + game.len();
            key_len(2) + encoded_len_varint(body as u64) + body
        };
        let games_len: usize = (0..u64::from(pairs))
            .flat_map(|p| self.games.iter().map(move |g| game_len(offset + p, g)))
            .sum();
        let results_len = counts.encoded_len() + games_len;
        let mut buf = Vec::with_capacity(results_len + 32);
        let mut head = Vec::new();
        pb::SubmitResultRequest {
            worker_id,
            lease_id,
            results: None,
        }
        .encode(&mut head)
        .expect("a Vec grows");
        buf.extend_from_slice(&head);
        encode_key(3, WireType::LengthDelimited, &mut buf);
        encode_varint(results_len as u64, &mut buf);
        if let Some(totals) = &counts.totals {
            prost::encoding::message::encode(1, totals, &mut buf);
        }
        for p in 0..u64::from(pairs) {
            let index = offset + p;
            for game in &self.games {
                encode_key(2, WireType::LengthDelimited, &mut buf);
                encode_varint((index_len(index) + game.len()) as u64, &mut buf);
                if index != 0 {
                    encode_key(1, WireType::Varint, &mut buf);
                    encode_varint(index, &mut buf);
                }
                buf.extend_from_slice(game);
            }
        }
        if let Some(variant) = &counts.variant {
            prost::encoding::message::encode(3, variant, &mut buf);
        }
        Bytes::from(buf)
    }
}

/// A gRPC codec that sends bytes already encoded as a message (such as
/// [`EncodedPair::request`]'s) and decodes the answer as `U`.
#[derive(Debug, Clone, Copy)]
pub struct PreEncoded<U>(PhantomData<U>);

impl<U> Default for PreEncoded<U> {
    fn default() -> Self {
        PreEncoded(PhantomData)
    }
}

/// [`PreEncoded`]'s encoder: the bytes as they are.
#[derive(Debug, Clone, Copy, Default)]
pub struct AsEncoded;

impl Encoder for AsEncoded {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl<U: Message + Default + Send + 'static> Codec for PreEncoded<U> {
    type Encode = Bytes;
    type Decode = U;
    type Encoder = AsEncoded;
    type Decoder = ProstDecoder<U>;

    fn encoder(&mut self) -> AsEncoded {
        AsEncoded
    }

    fn decoder(&mut self) -> ProstDecoder<U> {
        ProstDecoder::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> pb::GameResults {
        let game = |result: i32, red: u32| pb::GameRecord {
            opening_index: 7,
            start_fen: BENCH_OPENING.to_owned(),
            moves: (0u8..=200).collect(),
            opening_plies: 2,
            result,
            reason: "adjudicated".to_owned(),
            red_player: red,
            score_cp: vec![-300, 0, 12, 100_000],
            depth: vec![1, 9, 30],
            nodes: vec![1 << 40, 3],
            time_ms: vec![0, 250],
            stderr_tail: String::new(),
            overrun_ms: Some(0),
        };
        pb::GameResults {
            totals: Some(pb::Totals {
                pairs: 1,
                pentanomial: vec![0, 0, 1, 0, 0],
                wins: 1,
                draws: 0,
                losses: 1,
                reasons: [("adjudicated".to_owned(), 2)].into(),
                total_plies: 402,
            }),
            games: vec![game(1, 0), game(3, 1)],
            variant: Some(pb::VariantStats {
                red_wins: 1,
                black_wins: 1,
                plies_histogram: vec![0, 2],
                ..pb::VariantStats::default()
            }),
        }
    }

    #[test]
    fn an_encoded_pair_is_the_bytes_prost_writes() {
        let pair = pair();
        let encoded = EncodedPair::new(&pair);
        for (worker_id, lease_id, pairs, offset) in [
            (1, 2, 1, 0),
            (3, 0, 3, 0),
            (0, 9, 2, 127),
            (12, 300, 5, 1 << 33),
        ] {
            let expected = pb::SubmitResultRequest {
                worker_id,
                lease_id,
                results: Some(results_for(&pair, pairs, offset)),
            }
            .encode_to_vec();
            let built = encoded.request(worker_id, lease_id, pairs, offset);
            assert_eq!(&built[..], &expected[..], "{pairs} pairs from {offset}");
        }
    }
}
