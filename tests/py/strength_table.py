"""The README's strength table from the match records in tests/strength/chunks.tsv.

Usage:
  strength_table.py table [CHUNKS_TSV] [XQ_COORDINATOR]
  strength_table.py line BUILD OPPONENT OFFSET PLAY_JSON PLAY_PGN

`line` turns the summary of one `xq-worker play --dev-engine OPPONENT ...
--json --pgn PLAY_PGN` run into a record line (the external engine is the
dev player, so the counts are the opponent's); its speed column is the
built-in engine's own nodes per second, from its move comments in the PGN,
and its illegal-move column counts false draw claims too (a worker before
4a5a77d reported ElephantEye's draw claims as illegal moves). `table` sums the records of each build and
opponent, checks that their openings run from 0 without gaps or overlaps,
and prints one Markdown row each, with the built-in engine's logistic Elo
and 95 % interval from the pentanomial (`xq-coordinator stats elo --penta`,
from the opponent's side, negated). For an opponent with illegal moves it
also prints the Elo with those games scored as draws (from W/D/L), since
ElephantEye's are draw claims by its own rules. A second table sets each
hundred of openings side by side: every build that played all of it, with the
built-in engine's speed, so builds compare on the same openings and machine.
Records of the build `after-earlier` appear only there.
"""

import json
import re
import subprocess
import sys

NAMES = {
    "fs": "Fairy-Stockfish 11.1 (classical), `Hash=16`",
    "sjaak": "Sjaak II 1.4.1, `Hash=16`",
    "ee": "ElephantEye 3.31 with its book",
}
# Short names for the notes and the second table, once the first has named the versions.
SHORT = {"fs": "Fairy-Stockfish", "sjaak": "Sjaak II", "ee": "ElephantEye"}
ORDER = ["fs", "sjaak", "ee"]
BUILDS = ["before", "after", "texel", "clock"]
# Records kept but left out of the main table: the after build's first play of
# pairs 100-199, on other machines than the before-runs of those pairs.
EARLIER = "after-earlier"
KNOWN_BUILDS = BUILDS + [EARLIER]
# Each hundred of openings, for the side-by-side table.
HUNDREDS = [(0, 100), (100, 200)]


def pair(text):
    """`a/b` into two ints; `-` parts into None."""
    return tuple(None if p == "-" else int(float(p)) for p in text.split("/"))


def read_chunks(path):
    chunks = []
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 13:
                sys.exit(f"{path}:{n}: expected 13 tab-separated columns, found {len(cols)}")
            build, opp, offset, pairs, w, d, l, penta, tl, cr, il, mx, knps = cols
            chunk = {
                "build": build,
                "opp": opp,
                "offset": int(offset),
                "pairs": int(pairs),
                "wdl": (int(w), int(d), int(l)),
                "penta": tuple(int(x) for x in penta.split(",")),
                "time_losses": pair(tl),
                "crashes": pair(cr),
                "illegal": pair(il),
                "max_ms": pair(mx),
                "knps": None if knps == "-" else int(knps),
            }
            if build not in KNOWN_BUILDS or opp not in NAMES:
                sys.exit(f"{path}:{n}: unknown build '{build}' or opponent '{opp}'")
            if sum(chunk["penta"]) != chunk["pairs"] or sum(chunk["wdl"]) != 2 * chunk["pairs"]:
                sys.exit(f"{path}:{n}: counts do not add up to {chunk['pairs']} pairs")
            chunks.append(chunk)
    return chunks


def elo(coordinator, flag, counts):
    out = subprocess.run(
        [coordinator, "stats", "elo", "--json", flag, ",".join(map(str, counts))],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    e = json.loads(out)
    return -e["elo"], e["elo95"]


def signed(x):
    """`x` rounded, with its sign, and a typographic minus as the README writes it."""
    return f"{x:+.0f}".replace("-", "\u2212")


def add(a, b):
    return tuple(x + y for x, y in zip(a, b))


def table(path, coordinator):
    chunks = read_chunks(path)
    print("| opponent | build | pairs | opponent's W / D / L | built-in engine's Elo ± 95 % "
          "| draws | time losses | crashes | illegal moves or false draw claims |")
    print("|---|---|---|---|---|---|---|---|---|")
    notes = []
    for opp in ORDER:
        for build in BUILDS:
            group = sorted((c for c in chunks if c["opp"] == opp and c["build"] == build),
                           key=lambda c: c["offset"])
            if not group:
                continue
            end = 0
            for c in group:
                if c["offset"] != end:
                    sys.exit(f"{build} {opp}: openings {end}..{c['offset']} missing or doubled")
                end += c["pairs"]
            tot = {k: group[0][k] for k in ("wdl", "penta", "time_losses", "crashes", "illegal")}
            for c in group[1:]:
                for k in tot:
                    tot[k] = add(tot[k], c[k])
            e, e95 = elo(coordinator, "--penta", tot["penta"])
            w, d, l = tot["wdl"]
            f = lambda p: f"{p[0]} / {p[1]}"
            print(f"| {NAMES[opp]} | {build} | {end} | {w} / {d} / {l} | **{signed(e)} ± {e95:.0f}** "
                  f"| {d} | {f(tot['time_losses'])} | {f(tot['crashes'])} | {f(tot['illegal'])} |")
            maxes = [c["max_ms"][1] for c in group if c["max_ms"][1] is not None]
            opp_max = [c["max_ms"][0] for c in group if c["max_ms"][0] is not None]
            known = sum(c["pairs"] for c in group if c["max_ms"][1] is not None)
            note = (f"{SHORT[opp]}, {build}: {list(tot['penta'])}; largest answer "
                    f"{max(opp_max, default=0):,} / {max(maxes, default=0):,} ms")
            if known < end:
                note += f" (recorded for {known} of the {end} pairs)"
            illegal = tot["illegal"][0]
            if illegal:
                de, de95 = elo(coordinator, "--wdl", (w, d + illegal, l - illegal))
                note += f"; its {illegal} false draw claims (or illegal moves) scored as draws: {signed(de)} ± {de95:.0f} (W/D/L)"
            notes.append(note)
    print()
    for note in notes:
        print(f"- {note}")
    print()
    hundreds(chunks, coordinator)


def hundreds(chunks, coordinator):
    """Each hundred of openings with every build that played it, so that the
    builds compare on the same openings and, where the speed column says so,
    on the same machine."""
    print("| opponent | openings | build | built-in engine's k nodes/s | opponent's W / D / L "
          "| built-in engine's Elo ± 95 % |")
    print("|---|---|---|---|---|---|")
    for opp in ORDER:
        for lo, hi in HUNDREDS:
            for build in KNOWN_BUILDS:
                group = [c for c in chunks if c["opp"] == opp and c["build"] == build
                         and lo <= c["offset"] < hi]
                if sum(c["pairs"] for c in group) != hi - lo:
                    continue
                wdl, penta = (0, 0, 0), (0,) * 5
                for c in group:
                    wdl, penta = add(wdl, c["wdl"]), add(penta, c["penta"])
                e, e95 = elo(coordinator, "--penta", penta)
                speeds = sorted({c["knps"] for c in group if c["knps"] is not None})
                known = sum(c["pairs"] for c in group if c["knps"] is not None)
                speed = ("–" if not speeds else
                         (f"{speeds[0]:,}" if len(speeds) == 1 else f"{speeds[0]:,}–{speeds[-1]:,}")
                         + ("" if known == hi - lo else f" ({known} pairs)"))
                w, d, l = wdl
                print(f"| {SHORT[opp]} | {lo}–{hi - 1} | {build} | {speed} | {w} / {d} / {l} "
                      f"| {signed(e)} ± {e95:.0f} |")


COMMENT = re.compile(r"\{([^}]*)\}")
SEARCHED = re.compile(r"([\d.]+)s, n=(\d+)")


def builtin_knps(path, name="base"):
    """The built-in engine's nodes per second over a match PGN, in thousands.

    Each game's comments follow its moves in order, starting with the side
    to move in its `FEN` tag (Red without one); the built-in engine's side
    is the tag that names `name`.
    """
    with open(path, encoding="utf-8") as f:
        games = f.read().split("[Event ")[1:]
    nodes = seconds = 0.0
    for game in games:
        head, _, moves = game.partition("\n\n")
        red = f'[Red "{name}"]' in head
        if not red and f'[Black "{name}"]' not in head:
            sys.exit(f"{path}: a game without the player '{name}'")
        fen = re.search(r'\[FEN "[^ "]+ ([wb])', head)
        first = 1 if fen and fen.group(1) == "b" else 0
        for i, comment in enumerate(COMMENT.findall(moves), first):
            m = SEARCHED.search(comment)
            if m and (i % 2 == 0) == red:
                seconds += float(m.group(1))
                nodes += int(m.group(2))
    if seconds == 0:
        sys.exit(f"{path}: no searched moves by '{name}'")
    return round(nodes / seconds / 1000)


def line(build, opp, offset, path, pgn):
    with open(path, encoding="utf-8") as f:
        s = json.load(f)
    them, us = s["players"]
    both = lambda *keys: f"{sum(them.get(k, 0) for k in keys)}/{sum(us.get(k, 0) for k in keys)}"
    mx = f"{round(them['max_latency_ms'])}/{round(us['max_latency_ms'])}"
    penta = ",".join(map(str, s["pentanomial"]))
    knps = builtin_knps(pgn)
    print("\t".join(map(str, [build, opp, offset, s["pairs"], s["wins"], s["draws"], s["losses"],
                              penta, both("time_losses"), both("crashes"),
                              both("illegal_moves", "false_draw_claims"), mx, knps])))


def main(argv):
    if len(argv) >= 2 and argv[1] == "table":
        path = argv[2] if len(argv) > 2 else "tests/strength/chunks.tsv"
        coordinator = argv[3] if len(argv) > 3 else "target/release/xq-coordinator"
        table(path, coordinator)
    elif len(argv) == 7 and argv[1] == "line":
        line(argv[2], argv[3], int(argv[4]), argv[5], argv[6])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
