"""How long the built-in engine takes to see the games it loses.

Usage: score_lag.py PGN [THRESHOLD_PAWNS] [PLAYER]

PGN is a match from `xq-worker play --pgn`, whose move comments carry each
mover's own score (`{+0.37/16 0.573s, n=834889}`, pawns from the mover's
side; `book` moves have none). PLAYER (default `base`, the name `xq-worker
play` gives the built-in engine) is the engine studied; the other side is
the opponent. THRESHOLD defaults to 1.5 pawns.

For every game the opponent won, the script finds the ply from which the
opponent's score stays at +THRESHOLD or more to the end, and the ply from
which PLAYER's own score stays at -THRESHOLD or less. Their difference is
how many plies the winner saw the win before the loser did. A lag of a few
plies is a tactic beyond the loser's horizon; a lag of ten or more plies is
a position the loser's evaluation misjudged.
"""

import re
import statistics
import sys

SCORE = re.compile(r"([+-]?\d+\.\d+|[+-]?M\d+)/")


def score(comment):
    """The mover's score in pawns from a move comment, or None (a book move)."""
    m = SCORE.match(comment)
    if not m:
        return None
    text = m.group(1)
    if "M" in text:
        return -100.0 if text.startswith("-") else 100.0
    return float(text)


def held_from(scores, holds):
    """The first ply from which `holds` is true of every later score, or None."""
    start = None
    for ply, value in scores:
        if holds(value):
            if start is None:
                start = ply
        else:
            start = None
    return start


def lags(text, threshold, player):
    """Plies by which the opponent's claim preceded PLAYER's admission, per lost game."""
    out = []
    for game in text.split('[Game "')[1:]:
        red = re.search(r'\[Red "([^"]*)"\]', game).group(1)
        result = re.search(r'\[Result "([^"]*)"\]', game).group(1)
        if result not in ("1-0", "0-1"):
            continue
        player_red = red == player
        if (result == "1-0") == player_red:
            continue
        moves = game.split("\n\n", 1)[1]
        own, opponent = [], []
        for ply, comment in enumerate(re.findall(r"\{([^}]*)\}", moves)):
            value = score(comment)
            if value is None:
                continue
            red_moved = ply % 2 == 0
            (own if red_moved == player_red else opponent).append((ply, value))
        claim = held_from(opponent, lambda v: v >= threshold)
        admission = held_from(own, lambda v: v <= -threshold)
        if claim is not None and admission is not None:
            out.append(admission - claim)
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    threshold = float(sys.argv[2]) if len(sys.argv) > 2 else 1.5
    player = sys.argv[3] if len(sys.argv) > 3 else "base"
    with open(sys.argv[1], encoding="utf-8") as f:
        found = lags(f.read(), threshold, player)
    if not found:
        sys.exit(f"no game lost by {player} with both scores past {threshold}")
    print(
        f"{len(found)} games lost by {player}: the winner's score held +{threshold} "
        f"a median of {statistics.median(found):g} plies (mean {statistics.mean(found):.1f}) "
        f"before {player}'s held -{threshold}; 10 plies or more in {sum(x >= 10 for x in found)}"
    )


if __name__ == "__main__":
    main()
