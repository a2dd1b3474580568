#!/usr/bin/env python3
"""Differential test of repetition verdicts: xq-engine against Fairy-Stockfish.

Plays short self-play games with xq-engine (UCI, a few hundred nodes a move,
random openings), takes positions from them, builds repetition cycles from each
(every pair of reversible moves: each side moves one piece out and back, twice,
so the position occurs a third time; and cycles of two pieces a side), and
judges every cycle four ways:

* Fairy-Stockfish (pyffish, variant "xiangqi", which encodes the Asian
  Xiangqi Federation's chasing rules) as the oracle;
* `xq-engine adjudicate --batch --rules asian`;
* `xq-engine adjudicate --batch --rules standard` (the Chinese 1999 rules);
* `xq-engine adjudicate --batch --rules pikafish` (Pikafish's computer rules).

It prints the agreement of `asian` with Fairy-Stockfish, every difference by
kind, and every difference between `chinese` and `asian` by kind (see
engine/RULES.md §5 for the kinds). Each cycle is tagged with features computed by
Fairy-Stockfish's move generator alone (checks, captures created by a move,
escapes from check, attacks by a general or a soldier), so that the mix of
cycles can be told apart from the verdicts.

Usage:
  python3 tests/chase/differential.py [--engine target/release/xq-engine]
      [--games 40] [--seed 1] [--per-position 16] [--report FILE]
      [--write-sample FILE --sample 300] [--min-agreement 95]
      [--from-report FILE]   (re-analyse an earlier report, no new games)
      [--alt RULES ...]      (also judge every cycle under each rule string,
                              e.g. standard+chase-per-target, and count the
                              verdicts that differ from those of its code,
                              `standard` or `asian`, alone)

`--write-sample` writes a fixed sample of the cycles with all three verdicts
in the format of `engine/tests/data/chase_cycles.txt`, which the default test
suite replays without Python.

An external judge can be compared too (engine/PIKAFISH_RULES.md builds one
from Pikafish's `Position::rule_judge`):

  python3 tests/chase/differential.py ... --judge 'CMD ARGS' [--judge-name pikafish]
      [--write-judged FILE --judged-sample 3000]

CMD reads `fen | moves` lines on stdin and answers one line each, starting
with `win`, `loss` or `draw` for the side to move after the last move (a
reason may follow after a colon, then free text), or anything else for no
verdict; `early <verdict>:<branch> ply <n>` when the game ends before the last
move. The agreement of `chinese`, `asian` and `pikafish` with it is printed
by the judge's reason, every cycle on which `pikafish` differs from it is
listed (the cycles it ends early by result, reason and ply), and
`--write-judged` freezes a sample as
`fen | moves | chinese | asian | judge | judge's detail` lines. Without
`--judge` nothing changes.
"""

import argparse
import collections
import json
import random
import re
import subprocess
import sys

try:
    import pyffish as sf
except ImportError:  # pragma: no cover - told to the user
    sys.exit("differential.py needs pyffish: pip install pyffish")

VARIANT = "xiangqi"
CODES = ("chinese", "asian", "pikafish")
START = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"


# Coordinates: xq-engine ranks 0-9, Fairy-Stockfish ranks 1-10.
def split_fsf(mv):
    """'a10b10' -> ('a', 10, 'b', 10)."""
    i = 1
    while mv[i].isdigit():
        i += 1
    return mv[0], int(mv[1:i]), mv[i], int(mv[i + 1:])


def from_fsf(mv):
    f1, r1, f2, r2 = split_fsf(mv)
    return f"{f1}{r1 - 1}{f2}{r2 - 1}"


def fsf_move(mv):
    return f"{mv[0]}{int(mv[1]) + 1}{mv[2]}{int(mv[3]) + 1}"


def reverse(mv):
    return mv[2:4] + mv[0:2]


def side_of(fen):
    return fen.split()[1]


def flip_side(fen):
    parts = fen.split()
    parts[1] = "b" if parts[1] == "w" else "w"
    return " ".join(parts)


class Engine:
    """xq-engine over UCI, for self-play."""

    def __init__(self, path):
        self.p = subprocess.Popen([path, "uci"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1)
        self.send("uci")
        self.wait("uciok")

    def send(self, line):
        self.p.stdin.write(line + "\n")

    def wait(self, prefix):
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("xq-engine closed its output")
            if line.startswith(prefix):
                return line.strip()

    def best(self, fen, nodes):
        self.send(f"position fen {fen}")
        self.send(f"go nodes {nodes}")
        words = self.wait("bestmove").split()
        return None if words[1] in ("(none)",) else words[1]

    def close(self):
        self.send("quit")
        self.p.wait(timeout=10)


def legal(fen):
    return [from_fsf(m) for m in sf.legal_moves(VARIANT, fen, [])]


def after(fen, mv):
    return sf.get_fen(VARIANT, fen, [fsf_move(mv)])


def self_play(engine, games, rng, nodes=300, max_plies=140):
    """Positions (FEN) from self-play games with random openings."""
    positions = []
    for _ in range(games):
        fen = START
        for ply in range(max_plies):
            moves = legal(fen)
            if not moves:
                break
            if ply < 6 or rng.random() < 0.08:
                mv = rng.choice(moves)
            else:
                mv = engine.best(fen, nodes)
                if mv is None or mv not in moves:
                    break
            fen = after(fen, mv)
            if ply >= 10 and ply % 3 == 0:
                positions.append(fen)
    return positions


class Board:
    """A bare board for tagging cycles: attacks only, no legality (the move lists
    come from Fairy-Stockfish)."""

    def __init__(self, fen):
        self.sq = {}
        for i, row in enumerate(fen.split()[0].split("/")):
            f = 0
            for ch in row:
                if ch.isdigit():
                    f += int(ch)
                else:
                    self.sq[(f, 9 - i)] = ch
                    f += 1
        self.red_to_move = side_of(fen) == "w"

    def copy(self):
        b = Board.__new__(Board)
        b.sq = dict(self.sq)
        b.red_to_move = self.red_to_move
        return b

    def make(self, mv):
        frm = (ord(mv[0]) - 97, int(mv[1]))
        to = (ord(mv[2]) - 97, int(mv[3]))
        self.sq[to] = self.sq.pop(frm)
        self.red_to_move = not self.red_to_move

    def attacks(self, at):
        """Points the piece on `at` attacks."""
        p = self.sq[at]
        red = p.isupper()
        k = p.lower()
        f, r = at
        out = []
        on = lambda x, y: 0 <= x < 9 and 0 <= y < 10
        if k in "rc":
            for df, dr in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                x, y, screens = f + df, r + dr, 0
                while on(x, y):
                    if (x, y) in self.sq:
                        if k == "r" and screens == 0 or k == "c" and screens == 1:
                            out.append((x, y))
                        screens += 1
                        if screens > 1 or k == "r":
                            break
                    x, y = x + df, y + dr
        elif k == "n":
            for df, dr, lf, lr in ((1, 2, 0, 1), (-1, 2, 0, 1), (1, -2, 0, -1), (-1, -2, 0, -1),
                                   (2, 1, 1, 0), (2, -1, 1, 0), (-2, 1, -1, 0), (-2, -1, -1, 0)):
                if on(f + df, r + dr) and (f + lf, r + lr) not in self.sq:
                    out.append((f + df, r + dr))
        elif k == "b":
            for df, dr in ((2, 2), (2, -2), (-2, 2), (-2, -2)):
                x, y = f + df, r + dr
                if on(x, y) and (f + df // 2, r + dr // 2) not in self.sq and (y <= 4) == red:
                    out.append((x, y))
        elif k in "ak":
            steps = ((1, 1), (1, -1), (-1, 1), (-1, -1)) if k == "a" else ((1, 0), (-1, 0), (0, 1), (0, -1))
            for df, dr in steps:
                x, y = f + df, r + dr
                if 3 <= x <= 5 and ((0 <= y <= 2) if red else (7 <= y <= 9)):
                    out.append((x, y))
        elif k == "p":
            fwd = 1 if red else -1
            out.append((f, r + fwd))
            if (r >= 5) == red:
                out += [(f + 1, r), (f - 1, r)]
        return [q for q in out if on(*q)]

    def threats(self, red):
        """(attacker, target) pairs of `red`'s side on enemy pieces."""
        pairs = set()
        for at, p in self.sq.items():
            if p.isupper() == red:
                for t in self.attacks(at):
                    if t in self.sq and self.sq[t].isupper() != red:
                        pairs.add((at, t))
        return pairs

    def in_check(self, red):
        g = "K" if red else "k"
        if any(self.sq[t] == g for _, t in self.threats(not red)):
            return True
        kings = {p: q for q, p in self.sq.items() if p in "Kk"}
        if len(kings) == 2 and kings["K"][0] == kings["k"][0]:
            f = kings["K"][0]
            lo, hi = sorted((kings["K"][1], kings["k"][1]))
            return not any((f, r) in self.sq for r in range(lo + 1, hi))
        return False

    def pinned_at(self, at):
        """Whether the piece on `at` may not leave it without exposing its general."""
        p = self.sq[at]
        red = p.isupper()
        if p.lower() == "k" or self.in_check(red):
            return False
        del self.sq[at]
        exposed = self.in_check(red)
        self.sq[at] = p
        return exposed

    def defended(self, t):
        red = self.sq[t].isupper()
        return any(t in self.attacks(a) for a, p in self.sq.items() if p.isupper() == red and a != t)

    def recaptured(self, a, t):
        """Whether the side of the piece on `t` could take back on `t` after the piece on
        `a` captures it (a defender may stand behind the attacker, on its line)."""
        red = self.sq[t].isupper()
        b = self.copy()
        b.sq[t] = b.sq.pop(a)
        return any(t in b.attacks(d) for d, p in b.sq.items() if p.isupper() == red and d != t)

    def pinned(self):
        """Whether some piece may not leave its point without exposing its general."""
        for at, p in list(self.sq.items()):
            if p.lower() == "k":
                continue
            red = p.isupper()
            del self.sq[at]
            exposed = self.in_check(red)
            self.sq[at] = p
            if exposed and not self.in_check(red):
                return True
        return False


def move_tags(board, mv):
    """Features of `mv` on `board` (which it plays), from the bare board alone."""
    tags = set()
    red = board.red_to_move
    if board.in_check(red):
        tags.add("escape")
    before = board.threats(red)
    frm = (ord(mv[0]) - 97, int(mv[1]))
    to = (ord(mv[2]) - 97, int(mv[3]))
    board.make(mv)
    was = lambda a: frm if a == to else a
    new = {(a, t) for a, t in board.threats(red) if (was(a), t) not in before}
    if board.in_check(not red):
        tags.add("check")
    if board.pinned():
        tags.add("pin")
    for a, t in new:
        if board.sq[t].lower() == "k":
            continue
        tags.add("attack")
        if a != to:
            tags.add("discovered")
        if board.sq[a].lower() in "kp":
            tags.add("general-or-soldier")
        tags.add("protected-target" if board.defended(t) else "unprotected-target")
    return tags


def quiet_moves(fen):
    board = Board(fen)
    return [m for m in legal(fen) if (ord(m[2]) - 97, int(m[3])) not in board.sq]


def attacks_anew(board, mv):
    """Whether `mv` (played on a copy of `board`) checks or creates a capture."""
    red = board.red_to_move
    before = board.threats(red)
    frm = (ord(mv[0]) - 97, int(mv[1]))
    to = (ord(mv[2]) - 97, int(mv[3]))
    b = board.copy()
    b.make(mv)
    return any(((frm if a == to else a), t) not in before for a, t in b.threats(red))


def cycles_from(fen, rng, per_position):
    """Candidate cycles (one repetition's plies) from `fen`, tagged, those in which
    one side or both attack with every move first; legality of the way back is
    checked later by xq-engine."""
    board = Board(fen)
    ranked = []
    for m in quiet_moves(fen):
        am = attacks_anew(board, m)
        b1 = board.copy()
        b1.make(m)
        f1 = after(fen, m)
        for n in quiet_moves(f1):
            an = attacks_anew(b1, n)
            cyc = [m, n, reverse(m), reverse(n)]
            if not (am or an):
                ranked.append((0, rng.random(), cyc))
                continue
            b2 = b1.copy()
            b2.make(n)
            if (ord(m[2]) - 97, int(m[3])) not in b2.sq:
                continue
            am2 = attacks_anew(b2, reverse(m))
            b3 = b2.copy()
            b3.make(reverse(m))
            an2 = attacks_anew(b3, reverse(n))
            score = 2 * ((am and am2) + (an and an2)) + am + an + am2 + an2
            ranked.append((score, rng.random(), cyc))
    # Two pieces a side: m1 n1 m2 n2 and back.
    for _ in range(per_position // 4):
        cyc = []
        f = fen
        for i in range(4):
            options = [m for m in quiet_moves(f) if all(m[:2] != c[2:] for c in cyc[i % 2::2])]
            if not options:
                break
            cyc.append(rng.choice(options))
            f = after(f, cyc[-1])
        if len(cyc) == 4:
            ranked.append((3, rng.random(), cyc + [reverse(c) for c in cyc]))
    ranked.sort(reverse=True)
    quiet_quota = per_position // 6
    picked = [c for sc, _, c in ranked if sc > 0][: per_position - quiet_quota]
    picked += [c for sc, _, c in ranked if sc == 0][:quiet_quota]
    chosen = []
    for cyc in picked:
        b = board.copy()
        tags = set()
        for mv in cyc:
            if (ord(mv[0]) - 97, int(mv[1])) not in b.sq:
                tags = None
                break
            tags |= move_tags(b, mv)
        if tags is None:
            continue
        if len(cyc) == 8:
            tags.add("two-pieces")
        chosen.append((cyc, sorted(tags)))
    return chosen


def fsf_verdict(fen, moves):
    """'win', 'loss' or 'draw' for the side to move at the end, or None."""
    ended, value = sf.is_optional_game_end(VARIANT, fen, [fsf_move(m) for m in moves])
    if not ended:
        return None
    return "win" if value > 0 else "loss" if value < 0 else "draw"


def ours(engine_path, rules, games):
    lines = "".join(f"{fen} | {' '.join(moves)}\n" for fen, moves in games)
    out = subprocess.run([engine_path, "adjudicate", "--batch", "--natures", "--rules", rules],
                         input=lines, capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def parse_ours(line, fen):
    """(verdict for the side to move at the end, reason, natures) from an outcome line."""
    if line.startswith("error") or line.startswith("result: none"):
        return None, None, []
    words = line.split()
    result, reason = words[1], words[3]
    natures = words[words.index("natures:") + 1].split(",") if "natures:" in words else []
    plies = int(words[5])
    stm_start = side_of(fen)
    stm_end = stm_start if plies % 2 == 0 else ("b" if stm_start == "w" else "w")
    if result == "draw":
        v = "draw"
    else:
        v = "win" if (result == "red") == (stm_end == "w") else "loss"
    return v, reason, natures


ENDING = re.compile(r"result: (red|black|draw) reason: ([a-z-]+) ply: (\d+)")


def first_ending(line, fen):
    """(win|loss|draw for the side to move then, reason, ply) of the first ending an
    answer line names, also when it comes before the last move (the error for a move
    after the end names it); None when the game does not end."""
    m = ENDING.search(line)
    if not m:
        return None
    result, reason, ply = m.group(1), m.group(2), int(m.group(3))
    stm_start = side_of(fen)
    stm = stm_start if ply % 2 == 0 else ("b" if stm_start == "w" else "w")
    v = "draw" if result == "draw" else "win" if (result == "red") == (stm == "w") else "loss"
    return v, reason, ply


def point(sq):
    return (ord(sq[0]) - 97, int(sq[1]))


def side_forbidden(verdict, reason):
    """(side to move forbidden, other side forbidden) from a verdict; None when
    a draw leaves it open."""
    if verdict == "win":
        return (False, True)
    if verdict == "loss":
        return (True, False)
    if reason == "mutual-perpetual":
        return (True, True)
    if reason == "repetition":
        return (False, False)
    return None


def own_discovery(before, after, mv):
    """Whether a chariot or cannon moving along a line attacks, after `mv`, a piece
    behind its old point on that line (the old point between the new one and the
    target): Fairy-Stockfish takes the moved piece for a discovering piece of its own
    from-point (`Position::chased`, discovered attacks), so it counts that attack as
    new although the piece held it from the old point too (29.2)."""
    frm, to = point(mv[:2]), point(mv[2:])
    if after.sq[to].lower() not in "rc":
        return False
    red = after.sq[to].isupper()
    for t in after.attacks(to):
        if t not in after.sq or after.sq[t].isupper() == red or after.sq[t].lower() == "k":
            continue
        if after.sq[t].lower() == "p" and (t[1] <= 4) == after.sq[t].islower():
            continue
        collinear = (frm[0] == to[0] == t[0] and min(to[1], t[1]) < frm[1] < max(to[1], t[1])) or \
                    (frm[1] == to[1] == t[1] and min(to[0], t[0]) < frm[0] < max(to[0], t[0]))
        if not collinear:
            continue
        kind = after.sq[t].lower()
        if kind == after.sq[to].lower():
            continue  # attacks between pieces of one kind are exchange offers there
        if after.sq[to].lower() == "c" and kind == "r":
            return True  # a cannon on a chariot is a chase there whatever protects it
        # Fairy-Stockfish's protection test: a defender with the attacker lifted off.
        lifted = after.copy()
        del lifted.sq[to]
        if not any(t in lifted.attacks(d) for d, p in lifted.sq.items() if p.isupper() != red and d != t):
            return True
    return False


OWN_DISCOVERY = ("Fairy-Stockfish counts a slider's standing attack behind its old point, along its "
                 "line of motion, as new (29.2)")


def kind_asian_vs_fsf(case):
    """Why `asian` and Fairy-Stockfish differ on a cycle (engine/RULES.md §5.9)."""
    ours = side_forbidden(case["asian"][0], case["asian"][1])
    theirs = side_forbidden(case["fsf"], None)
    moves, natures = case["moves"], case["asian"][2]
    boards = [Board(case["fen"])]
    for mv in moves:
        b = boards[-1].copy()
        b.make(mv)
        boards.append(b)
    n = len(moves)
    # Side 0: the side to move at the end; its plies are n-2, n-4, ...
    for side in (0, 1):
        plies = range(n - 2 - side, -1, -2)
        o = ours[side] if ours else None
        t = theirs[side] if theirs else None
        if o and t is False or (o and theirs is None and case["fsf"] == "draw" and ours == (side == 0, side == 1)):
            # We find a chase Fairy-Stockfish does not.
            for i in plies:
                nat = natures[i]
                if not nat.startswith("chase:"):
                    continue
                before, after = boards[i], boards[i + 1]
                moved = point(moves[i][2:])
                for t_sq in nat.split(":")[1].split("+"):
                    tp = point(t_sq)
                    direct = tp in after.attacks(moved)
                    if not direct and not any(tp in after.attacks(a) and tp not in before.attacks(a)
                                              for a in after.sq if after.sq[a].isupper() == after.sq[moved].isupper()):
                        return "Fairy-Stockfish misses a threat made by cutting a protection (block, screen)"
                    attackers = [a for a in after.sq if after.sq[a].isupper() == after.sq[moved].isupper()
                                 and tp in after.attacks(a)]
                    if after.defended(tp) or any(after.recaptured(a, tp) for a in attackers):
                        return "Fairy-Stockfish counts any defender as protection (28.16, 29.1 exchange)"
            # Fairy-Stockfish's draw may instead come from a chase it finds for the other side.
            if case["fsf"] == "draw" and any(
                    not natures[i].startswith("chase:") and own_discovery(boards[i], boards[i + 1], moves[i])
                    for i in range(n - 2 - (1 - side), -1, -2)):
                return OWN_DISCOVERY
            return "Fairy-Stockfish misses a threat (other)"
        if t and o is False or (t and ours == (False, False)):
            for i in plies:
                if natures[i].startswith("chase:") or natures[i] == "check":
                    continue
                before, after = boards[i], boards[i + 1]
                red = before.red_to_move
                frm, to = point(moves[i][:2]), point(moves[i][2:])
                was = lambda a: frm if a == to else a
                new = [(a, tp) for a, tp in after.threats(red) if (was(a), tp) not in before.threats(red)
                       and after.sq[tp].lower() != "k"
                       and not (after.sq[tp].lower() == "p" and (tp[1] <= 4) == after.sq[tp].islower())]
                for a, tp in new:
                    if after.pinned_at(a):
                        return "Fairy-Stockfish credits a pinned attacker (29.4, AXF diagrams 63-66)"
                for a, tp in new:
                    kinds = {after.sq[a].lower(), after.sq[tp].lower()}
                    if kinds == {"n", "c"} and a in after.attacks(tp):
                        return "horse and cannon attacking each other: an exchange offer here (28.5, 25.3)"
                for a, tp in new:
                    if a == to and tp in before.attacks(frm) and tp in before.sq:
                        return "Fairy-Stockfish counts a re-attack by the moved piece as new (29.2)"
            # Also where the arbiter finds a chase of another piece (AXF 32 wants one piece).
            if any(natures[i] != "check" and own_discovery(boards[i], boards[i + 1], moves[i]) for i in plies):
                return OWN_DISCOVERY
            for i in plies:
                before, after = boards[i], boards[i + 1]
                red = before.red_to_move
                if any(after.defended(tp) for _, tp in after.threats(red)):
                    return "the exchange loses material or the capture is mated (29.1, 29.4)"
            return "Fairy-Stockfish finds a threat (other)"
    return "other"


def kind_chinese_vs_asian(chinese, asian):
    """The documented code difference behind a verdict that differs (engine/RULES.md §5)."""
    c_nat, a_nat = chinese[2], asian[2]
    c_words = {n.split(":")[0] for n in c_nat}
    if "mate-threat" in c_words:
        return "mate threat (28.2/25.2 vs AXF 9)"
    if "minor-chase" in c_words and chinese[1] == "mutual-perpetual":
        return "general or soldier in mutual perpetual attack (27.2 vs AXF 28)"
    differing = [(c, a) for c, a in zip(c_nat, a_nat) if c.split(":")[0] != a.split(":")[0]]
    if any(c.startswith("chase") and not a.startswith("chase") for c, a in differing):
        return "capture through a check (29.1 vs AXF chase definition)"
    if any(a.startswith("chase") and not c.startswith("chase") for c, a in differing):
        return "incidental threat on an advisor or elephant (27.3)"
    if chinese[1] == "perpetual-check-and-chase" or asian[1] == "perpetual-check-and-chase":
        return "one check one chase (25.2 vs AXF 12)"
    return "several pieces chased in turn (28.12 vs AXF 32)"


def alt_counts(engine_path, rules, cases):
    """Judges `cases` under `rules` and prints how many verdicts (result and
    reason) differ from those of the same code without the other presets
    (`standard`, `asian` or `pikafish`), by the pair of verdicts."""
    code = next((p for p in reversed(rules.split("+")) if p in ("asian", "pikafish", "chinese")),
                "chinese")
    games = [(c["fen"], c["moves"]) for c in cases]
    changes = collections.Counter()
    for c, line in zip(cases, ours(engine_path, rules, games)):
        alt = parse_ours(line, c["fen"])
        base = tuple(c[code][:2])
        if tuple(alt[:2]) != base:
            changes[(f"{base[0]}:{base[1]}", f"{alt[0]}:{alt[1]}")] += 1
    name = "standard" if code == "chinese" else code
    results = sum(v for (was, now), v in changes.items() if was.split(":")[0] != now.split(":")[0])
    print(f"{rules} vs {name}: {sum(changes.values())} of {len(cases)} verdicts differ "
          f"({results} results)")
    for (was, now), v in changes.most_common():
        print(f"  {v:5d}  {was} -> {now}")


def external_judge(command, cases):
    """Verdicts of an external judge command for `cases`: (verdict, reason, detail)
    per case, verdict None when it gave none."""
    lines = "".join(f"{c['fen']} | {' '.join(c['moves'])}\n" for c in cases)
    out = subprocess.run(command, shell=True, input=lines, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    if len(out) != len(cases):
        sys.exit(f"--judge answered {len(out)} lines for {len(cases)} cycles")
    verdicts = []
    for line in out:
        words = line.split(None, 1)
        head = words[0] if words else ""
        verdict, _, reason = head.partition(":")
        detail = words[1].strip() if len(words) > 1 else ""
        if verdict not in ("win", "loss", "draw"):
            verdicts.append((None, None, line.strip()))
        else:
            verdicts.append((verdict, reason or None, detail))
    return verdicts


def judge_early(detail):
    """(verdict, branch, ply) of an external judge's `early <verdict>:<branch> ply <n>`
    answer, or None."""
    m = re.match(r"early (win|loss|draw):([a-z-]+) ply (\d+)", detail or "")
    return (m.group(1), m.group(2), int(m.group(3))) if m else None


# A judge's reasons for endings outside a repetition, as our reason tokens.
JUDGE_ENDINGS = {"move-limit": "move-limit", "insufficient-material": "insufficient-material",
                 "checkmate": "checkmate", "stalemate": "stalemate"}


def judged_sample(cases, name, size, seed):
    """A fixed sample for --write-judged: every cycle the judge finds decisive or on
    which it differs from `asian`; then half the room for cycles on which it differs
    from `chinese`, half for the others, each judge reason of those with at least a
    tenth of its half where there are that many."""
    rng = random.Random(seed)
    must = [c for c in cases if c["judge"][0] != "draw" or c["asian"][0] != c["judge"][0]]
    pick = must if len(must) <= size else rng.sample(must, size)
    chosen = {id(c) for c in pick}
    differ = [c for c in cases if id(c) not in chosen and c["chinese"][0] != c["judge"][0]]
    rest = [c for c in cases if id(c) not in chosen and c["chinese"][0] == c["judge"][0]]
    room = size - len(pick)
    pick += rng.sample(differ, min(len(differ), room // 2))
    room = size - len(pick)
    by_reason = collections.defaultdict(list)
    for c in rest:
        by_reason[f"{c['judge'][0]}:{c['judge'][1]}"].append(c)
    floor = max(room // 10, 1)
    for reason, group in sorted(by_reason.items(), key=lambda kv: (len(kv[1]), kv[0])):
        share = max(floor, room * len(group) // max(len(rest), 1))
        pick += rng.sample(group, min(len(group), share, size - len(pick)))
    order = {id(c): i for i, c in enumerate(cases)}
    return sorted(pick, key=lambda c: order[id(c)])


def summarise_judge(args, cases):
    name = args.judge_name
    judged = [c for c in cases if c["judge"][0] is not None]
    print(f"{name}: {len(judged)} of {len(cases)} cycles judged")
    for code in CODES:
        agree = sum(c[code][0] == c["judge"][0] for c in judged)
        print(f"code {code} vs {name}: {agree} agree ({100.0 * agree / max(len(judged), 1):.1f} %)")
        by = collections.Counter(f"{c['judge'][0]}:{c['judge'][1]}" for c in judged)
        for reason, k in sorted(by.items()):
            a = sum(c[code][0] == c["judge"][0] for c in judged if f"{c['judge'][0]}:{c['judge'][1]}" == reason)
            print(f"  {name} {reason}: {k} cycles, {a} agree")
    differ = [c for c in judged if c["pikafish"][0] != c["judge"][0]]
    for c in differ:
        print(f"pikafish differs: {c['fen']} | {' '.join(c['moves'])} | "
              f"{c['pikafish'][0]}:{c['pikafish'][1]} | {name} {c['judge'][0]}:{c['judge'][1]}")
    # Cycles the judge ends before their last move (a material draw, say): the
    # pikafish code must end them at the same ply, with the same result and reason.
    early = [(c, judge_early(c["judge"][2])) for c in cases if judge_early(c["judge"][2])]
    same = [c for c, e in early
            if c.get("pikafish_end") == (e[0], JUDGE_ENDINGS.get(e[1], e[1]), e[2])]
    print(f"{name} ends {len(early)} cycles before their last move; "
          f"code pikafish ends {len(same)} of them alike (result, reason, ply)")
    for c, e in early:
        if c not in same:
            print(f"pikafish ends differently: {c['fen']} | {' '.join(c['moves'])} | "
                  f"{c.get('pikafish_end')} | {name} {e}")
    if args.write_judged:
        pick = judged_sample(judged, name, args.judged_sample, args.seed)
        agree = {code: sum(c[code][0] == c["judge"][0] for c in pick) for code in ("chinese", "asian")}
        kinds = collections.Counter(f"{c['judge'][0]}:{c['judge'][1]}" for c in pick)
        with open(args.write_judged, "w") as f:
            f.write(f"# Repetition cycles generated by tests/chase/differential.py (--games {args.games} "
                    f"--seed {args.seed} --per-position {args.per_position}),\n")
            for note in args.judge_note or []:
                f.write(f"# {note}\n")
            for code in ("chinese", "asian"):
                a = sum(c[code][0] == c["judge"][0] for c in judged)
                f.write(f"# all {len(judged)} cycles: {code} agrees with {name} on {a} "
                        f"({100.0 * a / max(len(judged), 1):.1f} %)\n")
            f.write(f"# Sample of {len(pick)}: every cycle {name} finds decisive or on which it differs from "
                    f"asian, half the rest differing from chinese, half agreeing by {name} reason.\n")
            f.write(f"# {name} reasons: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + "\n")
            for code in ("chinese", "asian"):
                f.write(f"# agreement {code}: {agree[code]} of {len(pick)}\n")
            f.write(f"# FEN | moves | chinese verdict | asian verdict | {name} verdict | {name} detail\n")
            f.write("# Verdicts are for the side to move after the last move: win, loss, draw,\n")
            f.write("# with the judge's reason after a colon.\n")
            for c in pick:
                f.write(f"{c['fen']} | {' '.join(c['moves'])} | {c['chinese'][0]}:{c['chinese'][1]} | "
                        f"{c['asian'][0]}:{c['asian'][1]} | {c['judge'][0]}:{c['judge'][1]} | {c['judge'][2]}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", default="target/release/xq-engine")
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-position", type=int, default=16)
    ap.add_argument("--report", help="write every cycle and its verdicts as JSON lines")
    ap.add_argument("--write-sample", help="write a fixed sample for the Rust regression test")
    ap.add_argument("--sample", type=int, default=300)
    ap.add_argument("--from-report", help="analyse the cycles of an earlier --report instead")
    ap.add_argument("--alt", action="append", default=[], metavar="RULES",
                    help="also judge the cycles under this rule string (presets joined with +) "
                         "and count the verdicts that differ from its code's (standard or asian); "
                         "repeatable")
    ap.add_argument("--min-agreement", type=float, default=0.0,
                    help="exit with status 1 when asian agrees with Fairy-Stockfish on fewer "
                         "than this percentage of the cycles")
    ap.add_argument("--judge", help="an external judge command (see above) to compare chinese and "
                                    "asian with")
    ap.add_argument("--judge-name", default="judge", help="the external judge's name in the output")
    ap.add_argument("--write-judged", help="write a fixed sample of the cycles with the external "
                                           "judge's verdicts")
    ap.add_argument("--judged-sample", type=int, default=3000)
    ap.add_argument("--judge-note", action="append",
                    help="a line for the header of --write-judged (how the judge was built); repeatable")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    if args.from_report:
        with open(args.from_report) as f:
            cases = [json.loads(line) for line in f]
        positions = sorted({c["fen"] for c in cases})
        return summarise(args, cases, positions)

    eng = Engine(args.engine)
    positions = self_play(eng, args.games, rng)
    eng.close()
    cases = []
    for fen in positions:
        for cyc, tags in cycles_from(fen, rng, args.per_position):
            cases.append({"fen": fen, "moves": cyc * 2, "tags": tags})
    games = [(c["fen"], c["moves"]) for c in cases]
    for rules, key in (("asian", "asian"), ("standard", "chinese")):
        for c, line in zip(cases, ours(args.engine, rules, games)):
            c[key] = parse_ours(line, c["fen"])
    # A cycle whose way back is illegal, or that ends early, is not a test case.
    cases = [c for c in cases if c["asian"][0] is not None and c["chinese"][0] is not None
             and len(c["asian"][2]) == len(c["moves"])]
    for c in cases:
        c["fsf"] = fsf_verdict(c["fen"], c["moves"])
    cases = [c for c in cases if c["fsf"] is not None]
    return summarise(args, cases, positions)


def summarise(args, cases, positions):
    games = [(c["fen"], c["moves"]) for c in cases]
    for rules, code in (("standard", "chinese"), ("asian", "asian"), ("pikafish", "pikafish")):
        for c, line in zip(cases, ours(args.engine, rules, games)):
            c[code] = parse_ours(line, c["fen"])
            if code == "pikafish":
                c["pikafish_end"] = first_ending(line, c["fen"])
    if args.judge:
        for c, v in zip(cases, external_judge(args.judge, cases)):
            c["judge"] = v
    n = len(cases)
    agree = sum(c["asian"][0] == c["fsf"] for c in cases)
    print(f"positions {len(positions)}, cycles compared {n}")
    print(f"asian vs Fairy-Stockfish: {agree} agree ({100.0 * agree / max(n, 1):.1f} %)")
    decisive = [c for c in cases if c["fsf"] != "draw" or c["asian"][0] != "draw"]
    d_agree = sum(c["asian"][0] == c["fsf"] for c in decisive)
    print(f"  of which decisive for either: {len(decisive)}, {d_agree} agree "
          f"({100.0 * d_agree / max(len(decisive), 1):.1f} %)")
    tags = collections.Counter(t for c in cases for t in c["tags"])
    for t, k in sorted(tags.items()):
        a = sum(c["asian"][0] == c["fsf"] for c in cases if t in c["tags"])
        print(f"  tag {t}: {k} cycles, {100.0 * a / k:.1f} % agree")
    diffs = collections.Counter(kind_asian_vs_fsf(c) for c in cases if c["asian"][0] != c["fsf"])
    print(f"asian vs Fairy-Stockfish: {n - agree} differ")
    for k, v in diffs.most_common():
        print(f"  {v:5d}  {k}")
    cd = collections.Counter(kind_chinese_vs_asian(c["chinese"], c["asian"]) for c in cases
                             if c["chinese"][0] != c["asian"][0])
    total_cd = sum(cd.values())
    print(f"chinese vs asian: {total_cd} differ")
    for k, v in cd.most_common():
        print(f"  {v:5d}  {k}")
    for code in CODES[1:]:
        k = sum(tuple(c[code][:2]) != tuple(c["chinese"][:2]) for c in cases)
        r = sum(c[code][0] != c["chinese"][0] for c in cases)
        print(f"{code} vs standard: {k} of {n} verdicts differ ({r} results)")
    for rules in args.alt:
        alt_counts(args.engine, rules, cases)
    if args.report:
        for c in cases:
            if c["asian"][0] != c["fsf"]:
                c["kind"] = kind_asian_vs_fsf(c)
        with open(args.report, "w") as f:
            for c in cases:
                f.write(json.dumps(c) + "\n")
    if args.write_sample:
        sample_rng = random.Random(args.seed)
        interesting = [c for c in cases if c["fsf"] != "draw" or c["asian"][0] != "draw"
                       or c["chinese"][0] != "draw"]
        rest = [c for c in cases if c not in interesting]
        k = min(len(interesting), args.sample * 2 // 3)
        pick = sample_rng.sample(interesting, k) + sample_rng.sample(rest, min(len(rest), args.sample - k))
        pick_agree = sum(c["asian"][0] == c["fsf"] for c in pick)
        with open(args.write_sample, "w") as f:
            f.write("# Repetition cycles generated by tests/chase/differential.py "
                    f"(--games {args.games} --seed {args.seed}): {len(pick)} of {n},\n")
            f.write("# two thirds of them decisive under some judge.\n")
            f.write(f"# agreement: {pick_agree} of {len(pick)}\n")
            f.write("# FEN | moves | chinese verdict | asian verdict | fairy-stockfish verdict\n")
            f.write("# Verdicts are for the side to move after the last move: win, loss, draw,\n")
            f.write("# with our reason after a colon.\n")
            for c in pick:
                f.write(f"{c['fen']} | {' '.join(c['moves'])} | {c['chinese'][0]}:{c['chinese'][1]} | "
                        f"{c['asian'][0]}:{c['asian'][1]} | {c['fsf']}\n")
    if args.judge:
        summarise_judge(args, cases)
    if n == 0 or 100.0 * agree / n < args.min_agreement:
        print(f"FAILED: agreement below {args.min_agreement} %")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
