"""Results a hostile or broken worker sends: another worker's id or lease,
a 4-entry pentanomial, illegal move bytes, a garbage FEN, fabricated legal
games claimed as checkmates, replayed and reordered submissions, a result
shaped for another run's lease, a submission after its lease lapsed, and a
worker that never heartbeats. Each honest result that is ACCEPTED is kept
in `accepted` (lease id -> run id, pairs) for the totals check."""

import time

from .common import bearer, honest


def run(ctx):
    pb, rpc, cases = ctx.pb, ctx.rpc, ctx.cases
    worker = rpc.WorkerServiceStub(ctx.channel)
    mine = bearer(ctx.args.worker_token)
    theirs = bearer(ctx.args.other_worker_token)
    accepted = ctx.accepted

    def register(name, auth=mine):
        return worker.Register(pb.RegisterRequest(name=name, threads=1, version="0.1.0"),
                               metadata=auth).worker_id

    def lease_of(worker_id, auth=mine):
        got = worker.RequestWork(pb.RequestWorkRequest(worker_id=worker_id), metadata=auth)
        if not got.HasField("lease"):
            raise SystemExit(f"no lease for worker {worker_id}")
        return got.lease

    def submit(worker_id, lease, results, auth=mine):
        return lambda: worker.SubmitResult(
            pb.SubmitResultRequest(worker_id=worker_id, lease_id=lease.lease_id, results=results),
            metadata=auth)

    def submitted(name, worker_id, lease, results, status, auth=mine, beat=True):
        """Submits and records the answer's status as the case's code; a
        heartbeat first keeps the lease (the test's leases last 5 s) unless
        the case is about its lapse."""
        if beat:
            worker.Heartbeat(pb.HeartbeatRequest(
                worker_id=worker_id, leases=[pb.LeaseProgress(lease_id=lease.lease_id)]),
                metadata=auth)
        answer = cases.expect(name, submit(worker_id, lease, results, auth), "OK")
        if answer is None:
            return
        got = pb.SubmitStatus.Name(answer.status)
        cases.record(name, got, status)
        if got == "SUBMIT_STATUS_ACCEPTED":
            if lease.lease_id in accepted:
                cases.record(name + "_counted_once", "COUNTED_TWICE", "COUNTED_ONCE")
            accepted[lease.lease_id] = (lease.run_id, lease.work.pairs)

    def truth(lease):
        return honest(lease.SerializeToString(), pb)

    w1, w2 = register("hostile-1"), register("hostile-2")
    other = register("hostile-other", theirs)
    l1 = lease_of(w1)
    good = truth(l1)

    # Another worker's id (another token's) and another worker's lease.
    cases.expect("SubmitResult_with_another_tokens_worker_id",
                 submit(w1, l1, good, theirs), "PERMISSION_DENIED")
    cases.expect("Heartbeat_with_another_tokens_worker_id",
                 lambda: worker.Heartbeat(pb.HeartbeatRequest(worker_id=w1), metadata=theirs),
                 "PERMISSION_DENIED")
    cases.expect("RequestWork_with_another_tokens_worker_id",
                 lambda: worker.RequestWork(pb.RequestWorkRequest(worker_id=w1), metadata=theirs),
                 "PERMISSION_DENIED")
    cases.expect("SubmitResult_of_another_workers_lease", submit(w2, l1, good),
                 "PERMISSION_DENIED")
    cases.expect("SubmitResult_of_another_tokens_workers_lease",
                 submit(other, l1, good, theirs), "PERMISSION_DENIED")
    # Releasing another worker's lease changes nothing: its state is
    # UNKNOWN to the caller and the lease still counts for its holder below.
    released = cases.expect("ReleaseLease_of_another_workers_lease",
                            lambda: worker.ReleaseLease(
                                pb.ReleaseLeaseRequest(worker_id=w2, lease_id=l1.lease_id),
                                metadata=mine), "OK")
    if released is not None:
        cases.record("ReleaseLease_of_another_workers_lease",
                     pb.LeaseState.Name(released.state), "LEASE_STATE_UNKNOWN")

    # Lies about the games.
    def altered(change):
        r = pb.GameResults()
        r.CopyFrom(good)
        change(r)
        return r

    def four_entries(r):
        del r.totals.pentanomial[:]
        r.totals.pentanomial.extend([0, 0, r.totals.pairs, 0])

    def illegal_moves(r):
        r.games[0].moves = b"\xff\xff" * 4

    def garbage_fen(r):
        r.games[0].start_fen = "garbage/that/is/no/fen w - - 0 1"

    def checkmates(r):
        # Every game claimed won by the first player by checkmate: legal
        # moves (the honest games' own), a false result and reason.
        for g in r.games:
            g.result = pb.GAME_RESULT_RED_WINS if g.red_player == 0 else pb.GAME_RESULT_BLACK_WINS
            g.reason = "checkmate"
        games = len(r.games)
        r.totals.wins, r.totals.draws, r.totals.losses = games, 0, 0
        del r.totals.pentanomial[:]
        r.totals.pentanomial.extend([0, 0, 0, 0, r.totals.pairs])
        r.totals.reasons.clear()
        r.totals.reasons["checkmate"] = games

    for name, change in [("a_pentanomial_of_4_entries", four_entries),
                         ("illegal_move_bytes", illegal_moves),
                         ("a_garbage_fen", garbage_fen),
                         ("legal_games_claimed_as_checkmates", checkmates)]:
        cases.expect(f"SubmitResult_with_{name}", submit(w1, l1, altered(change)),
                     "INVALID_ARGUMENT")

    # The honest result counts once; the same again is a duplicate.
    submitted("SubmitResult_honest", w1, l1, good, "SUBMIT_STATUS_ACCEPTED")
    submitted("SubmitResult_replayed", w1, l1, good, "SUBMIT_STATUS_DUPLICATE")

    # Two leases' results in the other order: both count.
    l2 = lease_of(w1)
    l3 = lease_of(w2)
    first, second = sorted([(w1, l2), (w2, l3)], key=lambda p: p[1].lease_id)
    submitted("SubmitResult_of_the_later_lease_first", *second, truth(second[1]),
              "SUBMIT_STATUS_ACCEPTED")
    submitted("SubmitResult_of_the_earlier_lease_second", *first, truth(first[1]),
              "SUBMIT_STATUS_ACCEPTED")

    # A result shaped for a lease of another run (another pair count).
    leases = []
    for i in range(8):
        w = register(f"hostile-runs-{i}")
        leases.append((w, lease_of(w)))
        runs = {lease.run_id for _, lease in leases}
        if len(runs) >= 2:
            break
    by_run = {}
    for w, lease in leases:
        by_run.setdefault(lease.run_id, (w, lease))
    if len(by_run) < 2:
        raise SystemExit("the scheduler handed out leases of one run only")
    (wa, la), (wb, lb) = list(by_run.values())[:2]
    cases.expect("SubmitResult_shaped_for_a_lease_of_another_run",
                 submit(wa, la, truth(lb)), "INVALID_ARGUMENT")
    for w, lease in leases:
        submitted(f"SubmitResult_honest_in_run_{lease.run_id}_lease_{lease.lease_id}", w, lease,
                  truth(lease), "SUBMIT_STATUS_ACCEPTED")

    # A worker that never heartbeats: its lease lapses, is handed out again,
    # and its late result is not counted; the second holder's is.
    silent = register("hostile-silent")
    lapsing = lease_of(silent)
    late = truth(lapsing)
    wait = lapsing.deadline_unix_ms / 1000 - time.time() + 0.5
    time.sleep(max(wait, 0))
    again_worker = register("hostile-again")
    again = None
    for _ in range(8):
        candidate = lease_of(again_worker)
        if (candidate.run_id == lapsing.run_id
                and candidate.work.openings.offset == lapsing.work.openings.offset):
            again = candidate
            break
        submitted(f"SubmitResult_honest_while_waiting_{candidate.lease_id}", again_worker,
                  candidate, truth(candidate), "SUBMIT_STATUS_ACCEPTED")
    cases.record("lapsed_lease_handed_out_again", "OK" if again else "NOT_HANDED_OUT", "OK")
    submitted("SubmitResult_after_the_lease_lapsed", silent, lapsing, late,
              "SUBMIT_STATUS_EXPIRED_IGNORED", beat=False)
    if again is not None:
        submitted("SubmitResult_of_the_lease_handed_out_again", again_worker, again, truth(again),
                  "SUBMIT_STATUS_ACCEPTED")
    cases.expect("Heartbeat_of_a_lapsed_lease_is_answered",
                 lambda: worker.Heartbeat(pb.HeartbeatRequest(
                     worker_id=silent, leases=[pb.LeaseProgress(lease_id=lapsing.lease_id)]),
                     metadata=mine), "OK")
