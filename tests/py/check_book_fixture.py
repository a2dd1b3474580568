"""Checks the masters' game fixture and a book made from it with Fairy-Stockfish.

Usage: check_book_fixture.py ICCS_FILE WXF_FILE BOOK_FILE PLIES

ICCS_FILE and WXF_FILE hold the same games (tests/fixtures/books/); BOOK_FILE is
what `xq-coordinator book make` made of them with `--plies PLIES`. pyffish
(Fairy-Stockfish, PyPI) shares no code with this project. For every game:

* every ICCS move is legal where it is played, from the game's [FEN];
* the WXF file's move, folded from full-width to ASCII, is what Fairy-Stockfish
  writes for it in WXF;
* where a published source gives the final position (PUBLISHED below), the game
  ends there;
* the book's line for the game is Fairy-Stockfish's position after PLIES plies
  (board and side to move; the book keeps one line per game here, since the
  games share no position at that depth).

Prints one line and exits non-zero naming the first failure.
"""

import re
import sys

import pyffish as sf

VARIANT = "xiangqi"
TAG = re.compile(r'^\[(\w+) "((?:[^"\\]|\\.)*)"\]$')
RESULTS = {"1-0", "0-1", "1/2-1/2", "*"}

# Final positions as published beside the records (board, side to move).
PUBLISHED = {
    # xiangqi.js README, the 1982 national championship game in ICCS.
    ("柳大华", "杨官璘"): "3akc3/9/4ba3/r7p/P1bC5/9/8P/3AB1N2/4K1nR1/2B6 b",
    # xiangqi.js tests, "Load PGN (Chinese Format)".
    ("李义庭", "王嘉良"): "2b2a3/3ka4/4b4/N8/8p/P5p2/4p4/9/4A4/4KAB2 b",
    ("许银川", "聂卫平"): "2R6/5k2C/n8/p1p5p/6b2/6p2/9/9/9/4K4 b",
}


def games(path):
    """(tags, move words) per game; move numbers and results dropped."""
    out, tags, words = [], None, []
    for line in open(path, encoding="utf-8"):
        m = TAG.match(line.strip())
        if m:
            if tags is None or words:
                if tags is not None:
                    out.append((tags, words))
                tags, words = {}, []
            tags[m.group(1)] = m.group(2)
        elif tags is not None:
            words += [w for w in line.split() if not w.endswith(".") and w not in RESULTS]
    if tags is not None:
        out.append((tags, words))
    return out


def ascii_form(text):
    return "".join(chr(ord(c) - 0xFEE0) if "\uff01" <= c <= "\uff5e" else c for c in text)


def uci(move):
    """`H2-E2` to Fairy-Stockfish's `h3e3` (ranks counted from 1)."""
    f1, r1, f2, r2 = re.fullmatch(r"([A-I])([0-9])-([A-I])([0-9])", move).groups()
    return f"{f1.lower()}{int(r1) + 1}{f2.lower()}{int(r2) + 1}"


def main(iccs_path, wxf_path, book_path, plies):
    plies = int(plies)
    book = [" ".join(l.split()[:2]) for l in open(book_path, encoding="utf-8") if l.strip()]
    iccs_games, wxf_games = games(iccs_path), games(wxf_path)
    if len(iccs_games) != len(wxf_games) or len(book) != len(iccs_games):
        sys.exit(f"{len(iccs_games)} ICCS games, {len(wxf_games)} WXF games, {len(book)} book lines")
    for n, ((tags, moves), (_, wxf), line) in enumerate(zip(iccs_games, wxf_games, book), 1):
        who = f"game {n} ({tags.get('Red')} - {tags.get('Black')})"
        fen = tags.get("FEN", sf.start_fen(VARIANT)).replace(" r ", " w ")
        ucis = [uci(m) for m in moves]
        for i, m in enumerate(ucis):
            if m not in sf.legal_moves(VARIANT, fen, ucis[:i]):
                sys.exit(f"{who}: ply {i + 1} {moves[i]} is illegal for Fairy-Stockfish")
        theirs = sf.get_san_moves(VARIANT, fen, ucis, False, sf.NOTATION_XIANGQI_WXF)
        for i, (a, b) in enumerate(zip(wxf, theirs)):
            if ascii_form(a) != b:
                sys.exit(f"{who}: ply {i + 1} is {a} in the WXF file, {b} for Fairy-Stockfish")
        final = " ".join(sf.get_fen(VARIANT, fen, ucis).split()[:2])
        published = PUBLISHED.get((tags.get("Red"), tags.get("Black")))
        if published and final != published:
            sys.exit(f"{who}: ends at {final}, published {published}")
        cut = " ".join(sf.get_fen(VARIANT, fen, ucis[:plies]).split()[:2])
        if cut != line:
            sys.exit(f"{who}: the book has {line}, Fairy-Stockfish {cut} after {plies} plies")
    print(f"{len(iccs_games)} games agree with Fairy-Stockfish")


if __name__ == "__main__":
    main(*sys.argv[1:])
