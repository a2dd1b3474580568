//! Training positions as Fairy-Stockfish's `.bin` records for xiangqi: the
//! 72-byte `PackedSfenValue` that `variant-nnue-tools`
//! (`generate_training_data ... data_format bin`, `UCI_Variant xiangqi`)
//! writes and `variant-nnue-pytorch` reads, with the packed position 512 bits
//! long (`DATA_SIZE = 512`, the default build; xiangqi needs at most 343 bits).
//!
//! # Record (72 bytes, integers little-endian)
//!
//! | bytes  | field                                                           |
//! |--------|-----------------------------------------------------------------|
//! | 0..64  | the packed position (below)                                     |
//! | 64..66 | `i16` score in centipawns, **for the side to move**             |
//! | 66..68 | `u16` move: `from << 7 \| to`, points numbered `rank * 12 + file` |
//! | 68..70 | `u16` game ply of the position (plies since the game's start)   |
//! | 70     | `i8` result for the side to move: 1 win, 0 draw, −1 loss        |
//! | 71     | padding, 0                                                      |
//!
//! # Packed position (bit stream, least significant bit of byte 0 first)
//!
//! 1. side to move: 0 Red (White), 1 Black;
//! 2. Red's general, then Black's, 7 bits each: `rank * 9 + file`, rank 0
//!    Red's back rank, file 0 the a-file;
//! 3. every other point, rank 9 down to 0, file a to i: an empty point is one
//!    0 bit; a piece is its 5-bit code (written from its low bit) and then one
//!    colour bit (0 Red, 1 Black). The codes are Fairy-Stockfish's Huffman
//!    codes of the variant's piece indices, whose order is its piece-type enum
//!    (rook < fers < cannon < soldier < horse < elephant):
//!    chariot `0b00001`, advisor `0b00011`, cannon `0b00101`, soldier
//!    `0b00111`, horse `0b01001`, elephant `0b01011`;
//! 4. pieces in hand: 2 colours × 7 piece types × 5 bits, all 0 in xiangqi;
//! 5. castling (4 bits) and en passant (1 bit), all 0;
//! 6. the halfmove clock's low 6 bits, the move number's low 8 bits, its high
//!    8 bits, the halfmove clock's bit 6; the rest of the 512 bits are 0.
//!
//! Scores and results here are the side to move's, as the format has them;
//! [`Sample`] holds Red's, and the conversion is [`Sample::side_to_move_score`].

use std::io::{self, Read, Write};

use xq_engine::{Color, Kind, Move, Position, Square};

use crate::data::{MAX_SCORE, Sample, SampleResult};

/// Bytes in one record.
pub const RECORD_LEN: usize = 72;
/// Bytes of the packed position.
const PACKED_LEN: usize = 64;
/// Files of Fairy-Stockfish's large-board square numbering, used by its moves.
const FSF_FILES: usize = 12;
/// Piece types of xiangqi, the count of hand fields per colour.
const PIECE_TYPES: usize = 7;
/// Bits of each hand count.
const HAND_BITS: u32 = 5;

/// One record: a sample with the move the engine chose and its game ply.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub sample: Sample,
    /// The best move in `sample.position` (the move the game played).
    pub best: Move,
    /// Plies from the game's start to `sample.position`.
    pub ply: u16,
}

/// Why 72 bytes are not a xiangqi record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PsvError {
    #[error("bad piece code at bit {bit} of record {record}")]
    PieceCode { record: u64, bit: usize },
    #[error("general square {value} out of the board in record {record}")]
    General { record: u64, value: u32 },
    #[error("record {record}: {why}")]
    Position { record: u64, why: String },
    #[error("record {record}: score {score} is beyond {MAX_SCORE} cp")]
    Score { record: u64, score: i16 },
    #[error("record {record}: result {value} is not 1, 0 or -1")]
    Result { record: u64, value: i8 },
    #[error("record {record}: move {raw:#06x} is not from-to on the board")]
    Move { record: u64, raw: u16 },
    #[error("the file ends inside record {record} ({got} of 72 bytes)")]
    Truncated { record: u64, got: usize },
    #[error("reading record {record}: {why}")]
    Io { record: u64, why: String },
}

/// The Huffman code (5 bits) of a non-general kind.
fn code(kind: Kind) -> Option<u32> {
    Some(match kind {
        Kind::General => return None,
        Kind::Chariot => 0b00001,
        Kind::Advisor => 0b00011,
        Kind::Cannon => 0b00101,
        Kind::Soldier => 0b00111,
        Kind::Horse => 0b01001,
        Kind::Elephant => 0b01011,
    })
}

fn kind_of_code(code: u32) -> Option<Kind> {
    [
        Kind::Chariot,
        Kind::Advisor,
        Kind::Cannon,
        Kind::Soldier,
        Kind::Horse,
        Kind::Elephant,
    ]
    .into_iter()
    .find(|&k| self::code(k) == Some(code))
}

fn fsf_square(sq: Square) -> u16 {
    (sq.rank().index() * FSF_FILES + sq.file().index()) as u16
}

fn square_of_fsf(n: u16) -> Option<Square> {
    let (rank, file) = (usize::from(n) / FSF_FILES, usize::from(n) % FSF_FILES);
    (file < 9).then(|| Square::from_coords(file as i32, rank as i32))?
}

/// Bits written from the least significant bit of byte 0.
struct Bits<'a> {
    data: &'a mut [u8; PACKED_LEN],
    at: usize,
}

impl Bits<'_> {
    fn put(&mut self, value: u32, n: u32) {
        for i in 0..n {
            if value.checked_shr(i).is_some_and(|v| v & 1 == 1) {
                self.data[self.at / 8] |= 1 << (self.at % 8);
            }
            self.at += 1;
        }
    }
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    /// `n` bits from the stream; 0 bits past its end.
    fn take(&mut self, n: u32) -> u32 {
        let mut v = 0;
        for i in 0..n {
            let bit = self
                .data
                .get(self.at / 8)
                .map_or(0, |b| u32::from(b >> (self.at % 8) & 1));
            v |= bit.checked_shl(i).unwrap_or(0);
            self.at += 1;
        }
        v
    }
}

fn color_bit(c: Color) -> u32 {
    match c {
        Color::Red => 0,
        Color::Black => 1,
    }
}

/// The packed form of `pos`. The format has no mark for a converted piece
/// (capture-conversion variant): one is packed as an ordinary piece of its
/// colour, so the export leaves such positions out.
pub fn pack(pos: &Position) -> [u8; PACKED_LEN] {
    let mut data = [0u8; PACKED_LEN];
    let mut bits = Bits {
        data: &mut data,
        at: 0,
    };
    bits.put(color_bit(pos.side_to_move()), 1);
    for c in [Color::Red, Color::Black] {
        bits.put(pos.general(c).index() as u32, 7);
    }
    for rank in (0..10).rev() {
        for file in 0..9 {
            let Some(sq) = Square::from_coords(file, rank) else {
                continue;
            };
            match pos.piece_at(sq) {
                None => bits.put(0, 1),
                Some(p) => {
                    if let Some(code) = code(p.kind()) {
                        bits.put(code, 5);
                        bits.put(color_bit(p.color()), 1);
                    }
                }
            }
        }
    }
    bits.put(0, 2 * PIECE_TYPES as u32 * HAND_BITS);
    bits.put(0, 4 + 1);
    let rule50 = pos.halfmove_clock().min(127);
    let fullmove = pos.fullmove_number().min(u32::from(u16::MAX));
    bits.put(rule50 & 0x3f, 6);
    bits.put(fullmove & 0xff, 8);
    bits.put(fullmove >> 8 & 0xff, 8);
    bits.put(rule50 >> 6 & 1, 1);
    data
}

/// The position packed in `data` (see the module docs); `record` numbers
/// it in errors.
pub fn unpack(data: &[u8; PACKED_LEN], record: u64) -> Result<Position, PsvError> {
    let mut r = Reader { data, at: 0 };
    let side = if r.take(1) == 0 { 'w' } else { 'b' };
    let mut generals = [None; 2];
    for g in &mut generals {
        let value = r.take(7);
        *g = Some(Square::from_index(value as u8).ok_or(PsvError::General { record, value })?);
    }
    let mut board = String::with_capacity(100);
    for rank in (0..10).rev() {
        let mut empty = 0u8;
        for file in 0..9 {
            let sq = Square::from_coords(file, rank);
            let letter = if sq == generals[0] {
                Some('K')
            } else if sq == generals[1] {
                Some('k')
            } else if r.take(1) == 0 {
                None
            } else {
                let start = r.at - 1;
                let code = 1 | r.take(4) << 1;
                let kind = kind_of_code(code).ok_or(PsvError::PieceCode { record, bit: start })?;
                let c = kind.fen_char();
                Some(if r.take(1) == 0 {
                    c
                } else {
                    c.to_ascii_lowercase()
                })
            };
            match letter {
                None => empty += 1,
                Some(l) => {
                    if empty > 0 {
                        board.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    board.push(l);
                }
            }
        }
        if empty > 0 {
            board.push(char::from(b'0' + empty));
        }
        if rank > 0 {
            board.push('/');
        }
    }
    r.take(2 * PIECE_TYPES as u32 * HAND_BITS + 5);
    let low = r.take(6);
    let fullmove = r.take(8) | r.take(8) << 8;
    let rule50 = low | r.take(1) << 6;
    let fen = format!("{board} {side} - - {rule50} {}", fullmove.max(1));
    Position::from_fen(&fen).map_err(|e| PsvError::Position {
        record,
        why: e.to_string(),
    })
}

/// The record's 72 bytes.
pub fn encode(rec: &Record) -> [u8; RECORD_LEN] {
    let mut out = [0u8; RECORD_LEN];
    out[..PACKED_LEN].copy_from_slice(&pack(&rec.sample.position));
    let score = rec.sample.side_to_move_score() as i16;
    out[64..66].copy_from_slice(&score.to_le_bytes());
    let mv = fsf_square(rec.best.from()) << 7 | fsf_square(rec.best.to());
    out[66..68].copy_from_slice(&mv.to_le_bytes());
    out[68..70].copy_from_slice(&rec.ply.to_le_bytes());
    let points = rec
        .sample
        .result
        .points_for(rec.sample.position.side_to_move());
    out[70] = if points == 1.0 {
        1
    } else if points == 0.0 {
        0xff
    } else {
        0
    };
    out
}

/// Reads one record's bytes back; `record` numbers it in errors.
pub fn decode(bytes: &[u8; RECORD_LEN], record: u64) -> Result<Record, PsvError> {
    let mut packed = [0u8; PACKED_LEN];
    packed.copy_from_slice(&bytes[..PACKED_LEN]);
    let position = unpack(&packed, record)?;
    let score = i16::from_le_bytes([bytes[64], bytes[65]]);
    if i32::from(score).abs() > MAX_SCORE {
        return Err(PsvError::Score { record, score });
    }
    let raw = u16::from_le_bytes([bytes[66], bytes[67]]);
    let best = square_of_fsf(raw >> 7 & 0x7f)
        .zip(square_of_fsf(raw & 0x7f))
        .filter(|_| raw >> 14 == 0)
        .map(|(from, to)| Move::new(from, to))
        .ok_or(PsvError::Move { record, raw })?;
    let ply = u16::from_le_bytes([bytes[68], bytes[69]]);
    let stm = position.side_to_move();
    let value = bytes[70] as i8;
    let result = match (value, stm) {
        (0, _) => SampleResult::Draw,
        (1, Color::Red) | (-1, Color::Black) => SampleResult::RedWin,
        (1, Color::Black) | (-1, Color::Red) => SampleResult::BlackWin,
        _ => return Err(PsvError::Result { record, value }),
    };
    let score = match stm {
        Color::Red => i32::from(score),
        Color::Black => -i32::from(score),
    };
    Ok(Record {
        sample: Sample {
            position,
            score,
            result,
        },
        best,
        ply,
    })
}

/// Writes records to `out` (buffer it: one write per record).
pub fn write<W: Write>(out: &mut W, rec: &Record) -> io::Result<()> {
    out.write_all(&encode(rec))
}

/// The records of a stream, one at a time, in bounded memory.
#[derive(Debug)]
pub struct Records<R> {
    input: R,
    next: u64,
    done: bool,
}

impl<R: Read> Records<R> {
    pub fn new(input: R) -> Records<R> {
        Records {
            input,
            next: 0,
            done: false,
        }
    }
}

impl<R: Read> Iterator for Records<R> {
    type Item = Result<Record, PsvError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let record = self.next;
        let mut buf = [0u8; RECORD_LEN];
        let mut got = 0;
        while got < RECORD_LEN {
            match self.input.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(PsvError::Io {
                        record,
                        why: e.to_string(),
                    }));
                }
            }
        }
        if got == 0 {
            self.done = true;
            return None;
        }
        if got < RECORD_LEN {
            self.done = true;
            return Some(Err(PsvError::Truncated { record, got }));
        }
        self.next += 1;
        Some(decode(&buf, record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(fen: &str, red_score: i32, result: SampleResult, mv: &str, ply: u16) -> Record {
        Record {
            sample: Sample {
                position: Position::from_fen(fen).unwrap(),
                score: red_score,
                result,
            },
            best: Move::parse_coords(mv).unwrap(),
            ply,
        }
    }

    /// Two generals, one Red chariot, Black to move: every byte by hand.
    #[test]
    fn a_small_position_packs_to_the_hand_computed_bytes() {
        // Red general e0 = 4, Black general d9 = 84, Red chariot a9 = 81.
        let rec = record(
            "R2k5/9/9/9/9/9/9/9/9/4K4 b - - 3 300",
            -57,
            SampleResult::RedWin,
            "d9d8",
            17,
        );
        let bytes = encode(&rec);
        let mut want = [0u8; RECORD_LEN];
        // Bit stream: stm 1; 4 in 7 bits; 84 in 7 bits; rank 9: a9 chariot
        // code 1,0,0,0,0 then colour 0; b9 c9 empty (0, 0); d9 skipped;
        // e9..i9 5 empties; ranks 8..0: 9*9 - 1 (e0 skipped) = 80 empties;
        // then 70 hand bits, 5 flag bits, all 0; rule50 3 in 6 bits; fullmove
        // 300 = 0x12c: 0x2c in 8 bits, 0x01 in 8 bits; rule50 bit 6: 0.
        let mut bits = Vec::new();
        let push = |bits: &mut Vec<u8>, v: u32, n: u32| {
            for i in 0..n {
                bits.push(v.checked_shr(i).map_or(0, |v| (v & 1) as u8));
            }
        };
        push(&mut bits, 1, 1);
        push(&mut bits, 4, 7);
        push(&mut bits, 84, 7);
        push(&mut bits, 0b00001, 5);
        push(&mut bits, 0, 1);
        push(&mut bits, 0, 2 + 5 + 80 + 70 + 5);
        push(&mut bits, 3, 6);
        push(&mut bits, 0x2c, 8);
        push(&mut bits, 0x01, 8);
        push(&mut bits, 0, 1);
        for (i, b) in bits.iter().enumerate() {
            want[i / 8] |= b << (i % 8);
        }
        // Written out: stm + low 7 bits of 4 -> 0b0000_1001.
        assert_eq!(want[0], 0x09);
        // Black to move, Red's score -57 -> +57 for Black.
        want[64..66].copy_from_slice(&57i16.to_le_bytes());
        // d9 = rank 9 file 3 -> 9*12+3 = 111; d8 -> 8*12+3 = 99.
        want[66..68].copy_from_slice(&(111u16 << 7 | 99).to_le_bytes());
        want[68..70].copy_from_slice(&17u16.to_le_bytes());
        want[70] = 0xff; // Red won: Black, to move, lost.
        assert_eq!(bytes, want);
        assert_eq!(decode(&bytes, 0).unwrap(), rec);
    }

    #[test]
    fn the_start_position_round_trips() {
        let rec = record(xq_engine::START_FEN, 25, SampleResult::Draw, "h2e2", 0);
        let bytes = encode(&rec);
        assert_eq!(bytes[70], 0);
        assert_eq!(decode(&bytes, 3).unwrap(), rec);
        // 1 + 14 + 30 pieces * 6 + 58 empties + 70 + 5 + 23 bits.
        let used = 1 + 14 + 30 * 6 + 58 + 70 + 5 + 23;
        assert!(bytes[used / 8 + 1..64].iter().all(|&b| b == 0));
    }

    #[test]
    fn a_stream_reads_back_record_by_record() {
        let recs = [
            record(xq_engine::START_FEN, 25, SampleResult::Draw, "h2e2", 0),
            record(
                "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1",
                -30,
                SampleResult::BlackWin,
                "h7e7",
                1,
            ),
        ];
        let mut buf = Vec::new();
        for r in &recs {
            write(&mut buf, r).unwrap();
        }
        assert_eq!(buf.len(), 2 * RECORD_LEN);
        let back: Vec<Record> = Records::new(&buf[..]).map(Result::unwrap).collect();
        assert_eq!(back, recs);
        let cut: Vec<_> = Records::new(&buf[..100]).collect();
        assert_eq!(cut.len(), 2);
        assert_eq!(cut[1], Err(PsvError::Truncated { record: 1, got: 28 }));
    }

    #[test]
    fn bad_records_are_errors() {
        let rec = record(xq_engine::START_FEN, 25, SampleResult::Draw, "h2e2", 0);
        let good = encode(&rec);
        let mut bad = good;
        bad[70] = 2;
        assert!(matches!(
            decode(&bad, 5),
            Err(PsvError::Result { record: 5, .. })
        ));
        let mut bad = good;
        bad[64..66].copy_from_slice(&i16::MAX.to_le_bytes());
        assert!(matches!(decode(&bad, 0), Err(PsvError::Score { .. })));
        let mut bad = good;
        bad[66..68].copy_from_slice(&(11u16 << 7 | 9).to_le_bytes());
        assert!(matches!(decode(&bad, 0), Err(PsvError::Move { .. })));
        let mut bad = good;
        bad[1] = 0xff;
        bad[2] = 0xff;
        assert!(decode(&bad, 0).is_err());
    }
}
