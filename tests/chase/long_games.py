#!/usr/bin/env python3
"""Random long games: the `pikafish` code's game endings against Pikafish's.

The repetition cycles of differential.py end by repetition; this script checks
the other endings that Pikafish's `Position::rule_judge` declares, which only
long games reach: the natural limit with Pikafish's count of checks, and the
draws for insufficient material (engine/PIKAFISH_RULES.md §6). It generates
games of random moves from varied positions and judges each one twice:

* `xq-engine adjudicate --batch --rules pikafish`;
* an external judge (`--judge CMD`): the harness of engine/PIKAFISH_RULES.md §8
  in its game mode, which reads `fen | moves` lines and answers
  `result: red|black|draw reason: <branch> ply: <n>` for the first ply at which
  the game ends (rule_judge on the start position and after every move, then no
  legal move), or `result: none ply: <n>`.

Every game is played on past its first ending (until no legal move or
`--max-plies`), so either judge may end it first; the comparison is of the
result, the reason (Pikafish's branch mapped to our token) and the ply.

Start positions, in turn:
  opening     the start position after 4 to 30 random plies;
  middlegame  a position of engine/tests/data/*_cycles.txt, its clock redrawn;
  endgame     generals with a random few advisors, elephants, chariots, horses,
              cannons and soldiers, the clock drawn from 0 to 119.
Move choice, drawn per game:
  checks      a check when there is one (70 %), else a quiet move (85 %);
  all-checks  a check when there is one (97 %), else a quiet move (98 %): both
              sides pass ten checks and answer checks with checks;
  quiet       a quiet move (95 %), a check now and then (10 %);
  random      any legal move.

Usage:
  python3 tests/chase/long_games.py --count 10000 --seed 1 \\
      [--engine target/release/xq-engine] [--judge './pikafish-judge --games'] \\
      [--write games.txt] [--from games.txt] [--differences FILE]

Legal moves come from xq-engine (`go perft 1` over UCI); the bare board of
differential.py tells checks and captures.
"""

import argparse
import collections
import os
import random
import re
import subprocess
import sys

try:
    import pyffish as sf
except ImportError:  # pragma: no cover - told to the user
    sys.exit("long_games.py needs pyffish: pip install pyffish")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from differential import START, Board, fsf_move, point  # noqa: E402

VARIANT = "xiangqi"
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "engine", "tests", "data")

# Pikafish's branches (the harness's reason words) as our reason tokens.
BRANCHES = {
    "perpetual-check": "perpetual-check",
    "mutual-check": "mutual-perpetual",
    "check-in-cycle": "repetition",
    "idle": "repetition",
    "perpetual-chase": "perpetual-chase",
    "mutual-chase": "mutual-perpetual",
    "move-limit": "move-limit",
    "insufficient-material": "insufficient-material",
    "checkmate": "checkmate",
    "stalemate": "stalemate",
}

ENDING = re.compile(r"result: (red|black|draw) reason: ([a-z-]+) ply: (\d+)")


def cycle_fens():
    fens = []
    for name in ("chase_cycles.txt", "pikafish_cycles.txt"):
        with open(os.path.join(DATA, name)) as f:
            fens += [line.split("|")[0].strip() for line in f if line.strip() and not line.startswith("#")]
    return sorted(set(fens))


def with_clock(fen, clock):
    parts = fen.split()
    parts += ["w", "-", "-", "0", "1"][len(parts) - 1:]
    parts[4] = str(clock)
    return " ".join(parts)


def board_fen(sq, red_to_move):
    rows = []
    for r in range(9, -1, -1):
        row, empty = "", 0
        for f in range(9):
            p = sq.get((f, r))
            if p is None:
                empty += 1
            else:
                row += (str(empty) if empty else "") + p
                empty = 0
        rows.append(row + (str(empty) if empty else ""))
    return "/".join(rows) + (" w" if red_to_move else " b")


# Points each kind may stand on, for Red (Black's are mirrored in rank).
PALACE = [(f, r) for f in (3, 4, 5) for r in (0, 1, 2)]
ADVISOR = [(3, 0), (5, 0), (4, 1), (3, 2), (5, 2)]
ELEPHANT = [(2, 0), (6, 0), (0, 2), (4, 2), (8, 2), (2, 4), (6, 4)]
ANY = [(f, r) for f in range(9) for r in range(10)]
SOLDIER = [(f, r) for f in range(9) for r in range(5, 10)] + [(f, r) for f in (0, 2, 4, 6, 8) for r in (3, 4)]


def endgame(rng):
    """A random legal endgame position, or None when the draw is not legal."""
    sq = {}

    def place(letter, points, red):
        pts = points if red else [(f, 9 - r) for f, r in points]
        free = [p for p in pts if p not in sq]
        if free:
            sq[rng.choice(free)] = letter if red else letter.lower()

    for red in (True, False):
        place("K", PALACE, red)
    for red in (True, False):
        for _ in range(rng.choice((0, 0, 1, 2))):
            place("A", ADVISOR, red)
        for _ in range(rng.choice((0, 1, 2))):
            place("B", ELEPHANT, red)
        for _ in range(rng.choice((0, 1, 1, 2))):
            place(rng.choice("RNCC"), ANY, red)
        for _ in range(rng.choice((0, 0, 0, 1, 2))):
            place("P", SOLDIER, red)
    red_to_move = rng.random() < 0.5
    fen = board_fen(sq, red_to_move)
    board = Board(fen)
    if board.in_check(not red_to_move):
        return None
    return with_clock(fen, rng.choice((0, rng.randrange(120), rng.randrange(60, 120))))


class MoveGen:
    """Legal moves from xq-engine over UCI (`go perft 1`), for one game at a time;
    pyffish's move generator costs milliseconds a call outside the start position."""

    def __init__(self, engine):
        self.p = subprocess.Popen([engine, "uci"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1)
        self.fen, self.moves = None, []

    def legal(self):
        line = f"position fen {self.fen}" + (" moves " + " ".join(self.moves) if self.moves else "")
        self.p.stdin.write(line + "\ngo perft 1\n")
        out = []
        while True:
            reply = self.p.stdout.readline()
            if not reply:
                raise RuntimeError("xq-engine closed its output")
            if reply.startswith("Nodes searched"):
                return out
            if reply.startswith("info string error"):
                raise RuntimeError(reply.strip())
            if ":" in reply and len(reply.split(":")[0]) == 4:
                out.append(reply.split(":")[0])

    def close(self):
        self.p.stdin.write("quit\n")
        self.p.wait(timeout=10)


def gives_check(board, mv):
    """Whether `mv` (legal on `board`) attacks the enemy general afterwards."""
    b = board.copy()
    red = b.red_to_move
    b.make(mv)
    g = next(q for q, p in b.sq.items() if p == ("k" if red else "K"))
    f, r = g
    own = lambda q: q in b.sq and b.sq[q].isupper() == red
    for df, dr in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        x, y, screens = f + df, r + dr, 0
        while 0 <= x < 9 and 0 <= y < 10:
            if (x, y) in b.sq:
                kind = b.sq[(x, y)].lower()
                if own((x, y)) and (kind == "r" and screens == 0 or kind == "c" and screens == 1):
                    return True
                screens += 1
                if screens > 1:
                    break
            x, y = x + df, y + dr
    for df, dr in ((1, 2), (-1, 2), (1, -2), (-1, -2), (2, 1), (2, -1), (-2, 1), (-2, -1)):
        h = (f + df, r + dr)
        if own(h) and b.sq[h].lower() == "n" and g in b.attacks(h):
            return True
    fwd = -1 if red else 1  # a soldier attacking g stands behind it, from the general's view
    for q in ((f, r + fwd), (f - 1, r), (f + 1, r)):
        if own(q) and b.sq[q].lower() == "p" and g in b.attacks(q):
            return True
    return False


def start_position(rng, kind, middlegames, gen):
    if kind == "opening":
        gen.fen, gen.moves = START, []
        for _ in range(rng.randrange(4, 31)):
            legal = gen.legal()
            if not legal:
                break
            gen.moves.append(rng.choice(legal))
        fen = sf.get_fen(VARIANT, START, [fsf_move(m) for m in gen.moves])
        return kind, with_clock(fen, int(fen.split()[4]) % 120)
    if kind == "middlegame":
        return kind, with_clock(rng.choice(middlegames), rng.randrange(120))
    while True:
        fen = endgame(rng)
        if fen:
            gen.fen, gen.moves = fen, []
            if gen.legal():
                return kind, fen


KINDS = ("opening", "middlegame", "endgame")
# Per style: the chance of playing a check when there is one, then of a quiet move.
STYLES = {"checks": (0.7, 0.85), "all-checks": (0.97, 0.98), "quiet": (0.1, 0.95), "random": (0, 0)}
# The styles drawn, all-checks twice as often as the others.
DRAWN = ("checks", "all-checks", "all-checks", "quiet", "random")


def play(rng, gen, fen, style, max_plies):
    """Random moves from `fen` in `style` until no legal move or `max_plies`."""
    gen.fen, gen.moves = fen, []
    board = Board(fen)
    p_check, p_quiet = STYLES[style]
    for _ in range(max_plies):
        legal = gen.legal()
        if not legal:
            break
        quiet = [m for m in legal if point(m[2:]) not in board.sq]
        pick = None
        if p_check and rng.random() < p_check:
            pool = list(quiet) or list(legal)
            rng.shuffle(pool)
            pick = next((m for m in pool if gives_check(board, m)), None)
        if pick is None:
            pool = quiet if quiet and rng.random() < p_quiet else legal
            pick = rng.choice(pool)
        gen.moves.append(pick)
        board.make(pick)
    return list(gen.moves)


def generate(count, seed, max_plies, engine, kinds=KINDS, styles=DRAWN):
    rng = random.Random(seed)
    middlegames = cycle_fens()
    gen = MoveGen(engine)
    games = []
    for i in range(count):
        kind, fen = start_position(rng, kinds[i % len(kinds)], middlegames, gen)
        style = rng.choice(styles)
        games.append({"fen": fen, "moves": play(rng, gen, fen, style, max_plies), "kind": kind,
                      "style": style})
    gen.close()
    return games


def ours(engine, rules, games):
    lines = "".join(f"{g['fen']} | {' '.join(g['moves'])}\n" for g in games)
    out = subprocess.run([engine, "adjudicate", "--batch", "--rules", rules], input=lines,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    return [parse(line) for line in out]


def parse(line):
    """(result, reason, ply) of the first ending in an answer line; ('none', None, None)
    when the game did not end; the error text for any other error. A move after the
    end is an error whose message names the ending."""
    m = ENDING.search(line)
    if m:
        return m.group(1), m.group(2), int(m.group(3))
    if line.startswith("result: none"):
        return "none", None, None
    return "error", line, None


def theirs(command, games):
    lines = "".join(f"{g['fen']} | {' '.join(g['moves'])}\n" for g in games)
    out = subprocess.run(command, shell=True, input=lines, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    if len(out) != len(games):
        sys.exit(f"--judge answered {len(out)} lines for {len(games)} games")
    verdicts = []
    for line in out:
        m = ENDING.search(line)
        if m:
            verdicts.append((m.group(1), BRANCHES.get(m.group(2), m.group(2)), int(m.group(3))))
        elif line.startswith("result: none"):
            verdicts.append(("none", None, None))
        else:
            verdicts.append(("error", line, None))
    return verdicts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", default="target/release/xq-engine")
    ap.add_argument("--rules", default="pikafish")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-plies", type=int, default=300)
    ap.add_argument("--kinds", default=",".join(KINDS), help="start kinds, in turn (comma-separated)")
    ap.add_argument("--styles", default=",".join(DRAWN), help="move styles to draw from (comma-separated)")
    ap.add_argument("--write", help="write the games as `fen | moves` lines")
    ap.add_argument("--from", dest="source", help="judge the games of an earlier --write instead")
    ap.add_argument("--judge", help="the external judge command in game mode")
    ap.add_argument("--differences", help="write every game on which the judges differ")
    args = ap.parse_args()

    if args.source:
        with open(args.source) as f:
            games = []
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                fen, moves, kind, style = (x.strip() for x in line.split("|"))
                games.append({"fen": fen, "moves": moves.split(), "kind": kind, "style": style})
    else:
        games = generate(args.count, args.seed, args.max_plies, args.engine,
                         tuple(args.kinds.split(",")), tuple(args.styles.split(",")))
    if args.write:
        with open(args.write, "w") as f:
            f.write(f"# tests/chase/long_games.py --count {args.count} --seed {args.seed} "
                    f"--max-plies {args.max_plies}: fen | moves | start kind | move style\n")
            for g in games:
                f.write(f"{g['fen']} | {' '.join(g['moves'])} | {g['kind']} | {g['style']}\n")

    code = ours(args.engine, args.rules, games)
    endings = collections.Counter(f"{r}:{why}" for r, why, _ in code)
    print(f"games {len(games)}, {sum(len(g['moves']) for g in games)} plies; "
          f"{args.rules} endings: " + ", ".join(f"{k} {v}" for k, v in sorted(endings.items())))
    if not args.judge:
        return 0
    judge = theirs(args.judge, games)
    agree = sum(a == b for a, b in zip(code, judge))
    print(f"{args.rules} vs judge: {agree} of {len(games)} agree on result, reason and ply "
          f"({100.0 * agree / max(len(games), 1):.2f} %)")
    by = collections.Counter()
    same = collections.Counter()
    for g, a, b in zip(games, code, judge):
        key = f"{b[0]}:{b[1]}"
        by[key] += 1
        same[key] += a == b
    for key in sorted(by):
        print(f"  judge {key}: {by[key]} games, {same[key]} agree")
    styles = collections.Counter((g["kind"], g["style"]) for g in games)
    print("  games by start and style: " + ", ".join(f"{k}/{s} {v}" for (k, s), v in sorted(styles.items())))
    differ = [(g, a, b) for g, a, b in zip(games, code, judge) if a != b]
    for g, a, b in differ[:20]:
        print(f"differs: {g['fen']} | {' '.join(g['moves'][:(b[2] or len(g['moves']))])} | ours {a} | judge {b}")
    if args.differences:
        with open(args.differences, "w") as f:
            for g, a, b in differ:
                f.write(f"{g['fen']} | {' '.join(g['moves'])} | ours {a} | judge {b}\n")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
