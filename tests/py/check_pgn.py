"""Reads Xiangqi PGN with independent readers and checks every game.

Usage: check_pgn.py ICCS_FILE [SAME_GAMES_FILE...]

ICCS_FILE holds games in ICCS; each further file holds the same games in WXF
or Chinese notation.

Two readers from PyPI, neither sharing code with this project:

* cchess (walker8088's XiangQi library) reads each game's file with its PGN
  reader, for the ICCS and Chinese formats it reads. Its reader is a simple
  one that does not skip comments, so it gets the game without them; it stops
  silently at the first move it cannot read or finds illegal, so the check is
  that it reads as many moves as [PlyCount] says.
* pyffish (Fairy-Stockfish) replays every game from its [FEN]: each move must
  be legal there, and written in WXF it must be what Fairy-Stockfish calls that
  move (it writes a sideways move `C2=5` where this project writes `C2.5`; both
  are WXF). ICCS moves are read directly; WXF and Chinese moves are matched
  against the legal moves (for Chinese, through cchess's reading of the
  same game). A game that ends in checkmate or stalemate must end in a
  position without a legal move, in check for a checkmate, and no other
  game may.

Prints one line per file and exits non-zero naming the first failure.
"""

import os
import re
import sys
import tempfile

import cchess
import pyffish as sf

VARIANT = "xiangqi"
RESULTS = {"1-0", "0-1", "1/2-1/2", "*"}
TAG = re.compile(r'^\[(\w+) "((?:[^"\\]|\\.)*)"\]$')
MOVE_NUMBER = re.compile(r"^\d+\.+$")


class Failure(Exception):
    pass


def split_games(text):
    """Games as (tags in order, movetext) pairs."""
    games = []
    tags, body = None, []
    for line in text.splitlines():
        m = TAG.match(line.strip())
        if m:
            if tags is None or body:
                if tags is not None:
                    games.append((tags, "\n".join(body)))
                tags, body = [], []
            tags.append((m.group(1), m.group(2)))
        elif tags is not None and line.strip():
            body.append(line)
    if tags is not None:
        games.append((tags, "\n".join(body)))
    return games


def movetext_tokens(body):
    """The move tokens and the result, comments removed."""
    plain = re.sub(r"\{[^}]*\}", " ", body)
    tokens = [t for t in plain.split() if not MOVE_NUMBER.match(t)]
    if not tokens or tokens[-1] not in RESULTS:
        raise Failure("the movetext does not end with a result")
    return tokens[:-1], tokens[-1]


def iccs_to_uci(move):
    """`H2-E2` to Fairy-Stockfish's `h3e3` (ranks counted from 1)."""
    m = re.fullmatch(r"([A-I])([0-9])-([A-I])([0-9])", move)
    if not m:
        raise Failure(f"'{move}' is not an ICCS move")
    f1, r1, f2, r2 = m.groups()
    return f"{f1.lower()}{int(r1) + 1}{f2.lower()}{int(r2) + 1}"


def cchess_iccs_to_uci(iccs):
    """cchess's `h2e2` to Fairy-Stockfish's `h3e3`."""
    return f"{iccs[0]}{int(iccs[1]) + 1}{iccs[2]}{int(iccs[3]) + 1}"


def replays(fen, moves):
    """Whether Fairy-Stockfish plays every move (it raises on an illegal one;
    one call replays a whole line, and each call costs milliseconds)."""
    try:
        sf.get_fen(VARIANT, fen, moves)
        return True
    except (SystemError, ValueError):
        return False


def first_illegal(fen, moves):
    """The first ply whose move is illegal, or None; by bisection."""
    if replays(fen, moves):
        return None
    good, bad = 0, len(moves)
    while bad - good > 1:
        mid = (good + bad) // 2
        if replays(fen, moves[:mid]):
            good = mid
        else:
            bad = mid
    return bad - 1


class Placement:
    """Where the pieces stand, to give cchess each position as a FEN; the
    moves are the ICCS game's, already found legal by Fairy-Stockfish."""

    def __init__(self, fen):
        rows, side = fen.split()[0].split("/"), fen.split()[1]
        self.board = []
        for row in reversed(rows):
            cells = []
            for ch in row:
                cells.extend([None] * int(ch) if ch.isdigit() else [ch])
            self.board.append(cells)
        self.red = side != "b"

    def play(self, uci):
        m = re.fullmatch(r"([a-i])(\d+)([a-i])(\d+)", uci)
        f1, r1, f2, r2 = "abcdefghi".index(m[1]), int(m[2]) - 1, "abcdefghi".index(m[3]), int(m[4]) - 1
        self.board[r2][f2], self.board[r1][f1] = self.board[r1][f1], None
        self.red = not self.red

    def fen(self):
        rows = []
        for cells in reversed(self.board):
            row, empty = "", 0
            for c in cells:
                if c is None:
                    empty += 1
                else:
                    row += (str(empty) if empty else "") + c
                    empty = 0
            rows.append(row + (str(empty) if empty else ""))
        return "/".join(rows) + (" w" if self.red else " b")


def wxf_form(text):
    return text.replace("=", ".")


def cchess_moves(tags, body):
    """The moves cchess reads from the game (without comments), as cchess
    writes them in ICCS (`h2e2`)."""
    plain = re.sub(r"\{[^}]*\}", " ", body)
    plain = " ".join(plain.split())
    head = "\n".join(f'[{k} "{v}"]' for k, v in tags)
    fd, path = tempfile.mkstemp(suffix=".pgn")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(f"{head}\n\n{plain}\n")
        game = cchess.Game.read_from(path)
    finally:
        os.unlink(path)
    return [m.to_iccs() for m in game.iter_moves()]


def header(tags):
    if not tags or tags[0] != ("Game", "Chinese Chess"):
        raise Failure(f'the first tag is {tags[:1]}, not [Game "Chinese Chess"]')
    t = dict(tags)
    for name in ("Red", "Black", "Result", "FEN", "Format", "Termination", "PlyCount"):
        if name not in t:
            raise Failure(f"no [{name}] tag")
    if t["Format"] not in ("ICCS", "WXF", "Chinese"):
        raise Failure(f"[Format \"{t['Format']}\"] is none of ICCS, WXF, Chinese")
    if sf.validate_fen(t["FEN"], VARIANT) != sf.FEN_OK:
        raise Failure(f"Fairy-Stockfish refuses the FEN '{t['FEN']}'")
    return t


def check_iccs(tags, body):
    """Checks an ICCS game; returns its moves in Fairy-Stockfish's form."""
    t = header(tags)
    if t["Format"] != "ICCS":
        raise Failure(f"[Format \"{t['Format']}\"] where ICCS was expected")
    fen = t["FEN"]
    moves, result = movetext_tokens(body)
    if result != t["Result"]:
        raise Failure(f"movetext result {result} but [Result \"{t['Result']}\"]")
    plies = int(t["PlyCount"])
    if len(moves) != plies:
        raise Failure(f"{len(moves)} moves but [PlyCount \"{plies}\"]")
    read = cchess_moves(tags, body)
    if len(read) != plies:
        at = moves[len(read)] if len(read) < plies else "?"
        raise Failure(f"cchess reads {len(read)} of {plies} moves; it stops at ply {len(read)} ({at})")
    played = []
    for ply, text in enumerate(moves):
        if read[ply] != text.replace("-", "").lower():
            raise Failure(f"ply {ply}: cchess reads {read[ply]} for {text}")
        played.append(iccs_to_uci(text))
    bad = first_illegal(fen, played)
    if bad is not None:
        raise Failure(f"ply {bad}: {moves[bad]} ({played[bad]}) is not legal for Fairy-Stockfish")
    no_move = not sf.legal_moves(VARIANT, fen, played)
    check = sf.gives_check(VARIANT, fen, played)
    reason = t["Termination"].split(":")[0]
    if reason == "checkmate" and not (no_move and check):
        raise Failure('[Termination "checkmate"] but Fairy-Stockfish sees no mate')
    if reason == "stalemate" and not (no_move and not check):
        raise Failure('[Termination "stalemate"] but Fairy-Stockfish sees no stalemate')
    if reason not in ("checkmate", "stalemate") and no_move:
        raise Failure(f"[Termination \"{t['Termination']}\"] in a position without a legal move")
    return played, reason


def check_tandem_wxf(fen, truth, ply, text):
    """A WXF move Fairy-Stockfish writes otherwise must be a tandem-piece
    move (`H+-2`) it writes by file, the only legal move of that piece,
    direction and number."""
    here = sf.get_fen(VARIANT, fen, truth[:ply])
    theirs = {
        m: wxf_form(sf.get_san(VARIANT, here, m, False, sf.NOTATION_XIANGQI_WXF))
        for m in sf.legal_moves(VARIANT, here, [])
    }
    named = [m for m, w in theirs.items() if w == wxf_form(text)]
    if not named and len(text) > 1 and text[1] in "+-":
        key = wxf_form(text)[0] + wxf_form(text)[-2:]
        named = [m for m, w in theirs.items() if w[0] + w[-2:] == key and w[1] not in "+-"]
    if named != [truth[ply]]:
        raise Failure(f"ply {ply}: WXF '{text}' names {named} for Fairy-Stockfish, not {truth[ply]}")


def check_same_game(tags, body, truth, iccs_tags, stats):
    """Checks a WXF or Chinese game against the same game's ICCS moves."""
    t = header(tags)
    expected = dict(iccs_tags)
    for name in ("Red", "Black", "Result", "FEN", "Termination", "PlyCount"):
        if t[name] != expected[name]:
            raise Failure(f"[{name} \"{t[name]}\"] but the ICCS game has \"{expected[name]}\"")
    fen = t["FEN"]
    moves, _ = movetext_tokens(body)
    if len(moves) != len(truth):
        raise Failure(f"{len(moves)} moves, the ICCS game {len(truth)}")
    if t["Format"] == "WXF":
        names = sf.get_san_moves(VARIANT, fen, truth, False, sf.NOTATION_XIANGQI_WXF)
    placement = Placement(fen)
    for ply, text in enumerate(moves):
        if t["Format"] == "WXF":
            if wxf_form(names[ply]) != wxf_form(text):
                check_tandem_wxf(fen, truth, ply, text)
        else:
            board = cchess.ChessBoard(placement.fen())
            read = cchess.move.Move.from_text(board, text)
            uci = None
            if read:
                (x1, y1), (x2, y2) = read
                uci = f"{'abcdefghi'[x1]}{y1 + 1}{'abcdefghi'[x2]}{y2 + 1}"
            if uci != truth[ply]:
                x, y = "abcdefghi".index(truth[ply][0]), int(re.match(r"[a-i](\d+)", truth[ply]).group(1)) - 1
                fench = board.get_fench((x, y))
                like_on_file = sum(1 for p in board.get_fenchs(fench) if p[0] == x)
                if like_on_file <= 1:
                    raise Failure(f"ply {ply}: cchess reads '{text}' as {uci}, not {truth[ply]}")
                # cchess picks the first like piece on the named file
                # whatever the direction or place (前/后) says.
                key = "moves of like pieces sharing a file, which cchess misreads"
                stats[key] = stats.get(key, 0) + 1
        placement.play(truth[ply])
    return t["Format"]


def main(paths):
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    games = {path: split_games(open(path, encoding="utf-8").read()) for path in paths}
    for path, gs in games.items():
        if not gs:
            print(f"{path}: no games", file=sys.stderr)
            return 1
    iccs = games[paths[0]]
    truths, reasons = [], {}
    for i, (tags, body) in enumerate(iccs):
        try:
            played, reason = check_iccs(tags, body)
        except Failure as e:
            print(f"{paths[0]}: game {i + 1}: {e}", file=sys.stderr)
            return 1
        truths.append(played)
        reasons[reason] = reasons.get(reason, 0) + 1
    summary = ", ".join(f"{r} {n}" for r, n in sorted(reasons.items()))
    print(f"{paths[0]}: {len(iccs)} games read (ICCS): {summary}")
    for path in paths[1:]:
        if len(games[path]) != len(iccs):
            print(f"{path}: {len(games[path])} games, the ICCS file {len(iccs)}", file=sys.stderr)
            return 1
        stats = {}
        for i, (tags, body) in enumerate(games[path]):
            try:
                fmt = check_same_game(tags, body, truths[i], iccs[i][0], stats)
            except Failure as e:
                print(f"{path}: game {i + 1}: {e}", file=sys.stderr)
                return 1
        extra = "".join(f"; {k}: {n}" for k, n in stats.items())
        print(f"{path}: {len(iccs)} games read ({fmt}), every move the ICCS game's{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
