"""After the cases: the run totals equal the results that were accepted,
through the API (GetRun) and the database file (read-only), the database
passes `PRAGMA integrity_check`, and the server still answers."""

import sqlite3

from .common import bearer


def check(ctx):
    pb, rpc = ctx.pb, ctx.rpc
    runs = rpc.RunServiceStub(ctx.channel)
    admin = bearer(ctx.args.admin_token)
    expected = {run: 0 for run in ctx.runs}
    for run_id, pairs in ctx.accepted.values():
        expected[run_id] = expected.get(run_id, 0) + pairs
    db = sqlite3.connect(f"file:{ctx.args.db}?mode=ro", uri=True)
    problems = []
    by_run = {}
    for run_id, pairs in sorted(expected.items()):
        status = runs.GetRun(pb.GetRunRequest(run_id=run_id), metadata=admin, timeout=30).run
        t = status.totals
        api = {"pairs": t.pairs, "wins": t.wins, "draws": t.draws, "losses": t.losses}
        row = db.execute("SELECT pairs, wins, draws, losses FROM runs WHERE id = ?",
                         (run_id,)).fetchone()
        stored = dict(zip(["pairs", "wins", "draws", "losses"], row or (None,) * 4))
        # Every accepted result here is an honest one: all its games drawn.
        want = {"pairs": pairs, "wins": 0, "draws": 2 * pairs, "losses": 0}
        done = db.execute("SELECT COUNT(*), COALESCE(SUM(pairs), 0) FROM leases "
                          "WHERE run_id = ? AND state = 'done'", (run_id,)).fetchone()
        accepted_leases = sum(1 for r, _ in ctx.accepted.values() if r == run_id)
        by_run[run_id] = {"api": api, "db": stored, "expected": want,
                          "done_leases": done[0], "accepted_leases": accepted_leases}
        if api != want:
            problems.append(f"run {run_id}: GetRun says {api}, accepted {want}")
        if stored != want:
            problems.append(f"run {run_id}: the database says {stored}, accepted {want}")
        if (done[0], done[1]) != (accepted_leases, pairs):
            problems.append(f"run {run_id}: {done[0]} leases done ({done[1]} pairs), "
                            f"{accepted_leases} accepted ({pairs} pairs)")
    integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    db.close()
    if integrity != "ok":
        problems.append(f"integrity_check: {integrity}")
    try:
        runs.ListRuns(pb.ListRunsRequest(), metadata=admin, timeout=30)
        answers = True
    except Exception as e:  # noqa: BLE001 - any failure means it does not answer
        answers = False
        problems.append(f"the server no longer answers: {e}")
    return {"ok": not problems, "problems": problems, "runs": by_run,
            "integrity_check": integrity, "still_answers": answers}
