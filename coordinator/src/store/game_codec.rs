//! The stored form of a result's games: one compressed blob per batch.
//!
//! A blob is one format byte, then the games' protobuf messages, each
//! length-delimited (as `prost` writes them), compressed together with
//! DEFLATE (`flate2` on the pure-Rust `miniz_oxide` back end). The games of
//! one result compress far better together than one by one: they share the
//! opening source's start position, the players' node counts and depths and
//! the reason tokens (see the notes of issue 17 for the measurements).
//! Protobuf's rules for adding fields keep old blobs readable.
//!
//! Decoding is bounded: a blob that inflates past [`MAX_DECODED_BYTES`] or
//! holds a message that does not parse is an error, never a panic.

use std::io::{Read, Write};

use flate2::Compression;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use prost::Message;
use thiserror::Error;

/// The format byte of DEFLATE over length-delimited protobuf messages.
pub const FORMAT_DEFLATE_PROTOBUF: u8 = 1;

/// Most bytes one blob may inflate to (a result holds at most a few hundred
/// games of a few kilobytes each).
pub const MAX_DECODED_BYTES: u64 = 64 << 20;

/// The compression level: 6 (zlib's default); 9 gained nothing on real games.
const LEVEL: u32 = 6;

/// Why a stored blob could not be read.
#[derive(Debug, Error)]
pub enum CodecError {
    #[error("empty game blob")]
    Empty,
    #[error("unknown game blob format {0}")]
    Format(u8),
    #[error("corrupt game blob: {0}")]
    Inflate(#[from] std::io::Error),
    #[error("game blob inflates to more than {MAX_DECODED_BYTES} bytes")]
    TooLarge,
    #[error("corrupt game record {index} in the blob: {source}")]
    Record {
        index: usize,
        #[source]
        source: prost::DecodeError,
    },
}

/// The blob of `records`, in order.
pub fn encode<M: Message>(records: &[M]) -> Vec<u8> {
    let mut plain = Vec::new();
    for r in records {
        r.encode_length_delimited(&mut plain)
            .expect("a Vec grows as needed");
    }
    let mut out = vec![FORMAT_DEFLATE_PROTOBUF];
    let mut encoder = DeflateEncoder::new(&mut out, Compression::new(LEVEL));
    encoder
        .write_all(&plain)
        .expect("writing to a Vec cannot fail");
    encoder.finish().expect("writing to a Vec cannot fail");
    out
}

/// The records of a blob made by [`encode`].
pub fn decode<M: Message + Default>(blob: &[u8]) -> Result<Vec<M>, CodecError> {
    let (&format, body) = blob.split_first().ok_or(CodecError::Empty)?;
    if format != FORMAT_DEFLATE_PROTOBUF {
        return Err(CodecError::Format(format));
    }
    let mut plain = Vec::new();
    DeflateDecoder::new(body)
        .take(MAX_DECODED_BYTES + 1)
        .read_to_end(&mut plain)?;
    if plain.len() as u64 > MAX_DECODED_BYTES {
        return Err(CodecError::TooLarge);
    }
    let mut rest = plain.as_slice();
    let mut records = Vec::new();
    while !rest.is_empty() {
        let record =
            M::decode_length_delimited(&mut rest).map_err(|source| CodecError::Record {
                index: records.len(),
                source,
            })?;
        records.push(record);
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_engine::rules::GameResult;
    use xq_proto::{GameRecord, MoveStats, pb};

    fn record(i: u32) -> pb::GameRecord {
        let moves = ["h2e2", "h9g7", "h0g2", "i9h9"]
            .map(|m| xq_engine::Move::parse_coords(m).unwrap())
            .to_vec();
        GameRecord {
            opening_index: u64::from(i / 2),
            start_fen: xq_engine::START_FEN.to_owned(),
            moves,
            opening_plies: 2,
            result: GameResult::Draw,
            reason: xq_engine::rules::Reason::Adjudication,
            red_player: (i % 2) as u8,
            per_move: vec![
                MoveStats {
                    score_cp: 12,
                    depth: 7,
                    nodes: 1500,
                    time_ms: 3,
                };
                2
            ],
            stderr_tail: String::new(),
            overrun_ms: None,
        }
        .into()
    }

    #[test]
    fn records_round_trip_in_order() {
        let records: Vec<pb::GameRecord> = (0..40).map(record).collect();
        let blob = encode(&records);
        assert_eq!(blob[0], FORMAT_DEFLATE_PROTOBUF);
        let plain: usize = records.iter().map(|r| r.encoded_len() + 1).sum();
        assert!(blob.len() * 4 < plain, "{} of {plain} bytes", blob.len());
        assert_eq!(decode::<pb::GameRecord>(&blob).unwrap(), records);
        assert_eq!(
            decode::<pb::GameRecord>(&encode::<pb::GameRecord>(&[])).unwrap(),
            vec![]
        );
    }

    #[test]
    fn bad_blobs_are_errors() {
        assert!(matches!(
            decode::<pb::GameRecord>(&[]),
            Err(CodecError::Empty)
        ));
        assert!(matches!(
            decode::<pb::GameRecord>(&[7, 1, 2]),
            Err(CodecError::Format(7))
        ));
        let mut blob = encode(&[record(1)]);
        blob.truncate(blob.len() / 2);
        assert!(decode::<pb::GameRecord>(&blob).is_err());
        // Valid DEFLATE around bytes that are no protobuf message.
        let mut garbage = vec![FORMAT_DEFLATE_PROTOBUF];
        let mut e = DeflateEncoder::new(&mut garbage, Compression::new(LEVEL));
        e.write_all(&[0x05, 0xff, 0xff]).unwrap();
        e.finish().unwrap();
        assert!(matches!(
            decode::<pb::GameRecord>(&garbage),
            Err(CodecError::Record { index: 0, .. })
        ));
    }

    #[test]
    fn a_blob_that_inflates_too_far_is_refused() {
        let mut bomb = vec![FORMAT_DEFLATE_PROTOBUF];
        let mut e = DeflateEncoder::new(&mut bomb, Compression::new(9));
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..=(MAX_DECODED_BYTES >> 20) {
            e.write_all(&zeros).unwrap();
        }
        e.finish().unwrap();
        assert!(bomb.len() < 1 << 20);
        assert!(matches!(
            decode::<pb::GameRecord>(&bomb),
            Err(CodecError::TooLarge)
        ));
    }
}
