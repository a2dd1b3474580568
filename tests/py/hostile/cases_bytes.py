"""Bytes no honest client sends: 600 random byte strings to every method,
a 5 MiB request, a million entries in repeated fields, protobuf nesting
beyond the decoder's limit, and messages cut mid-field.

Undecodable bytes are answered INTERNAL by tonic (as gRPC's own servers
do); random bytes that happen to decode reach the handler and get its
refusal. Any other code (UNKNOWN, UNAVAILABLE, a deadline: a crash or a
hang) is a failure, and so is a long message."""

import os
import random
from concurrent.futures import ThreadPoolExecutor

from .cases_outside import OPEN, READ, WORK
from .common import MAX_MESSAGE_BYTES, STANDARD, bearer, methods, raw_call

RANDOM_PER_METHOD = 600
# What a handler answers to a request it decoded (random fields are
# refused, unknown, or someone else's; Login is limited per address).
HANDLER_CODES = {"OK", "INVALID_ARGUMENT", "NOT_FOUND", "PERMISSION_DENIED",
                 "FAILED_PRECONDITION", "OUT_OF_RANGE", "RESOURCE_EXHAUSTED", "ALREADY_EXISTS",
                 "UNAUTHENTICATED"}


def undecodable(code, message):
    """tonic's answer to bytes it cannot decode."""
    return code == "INTERNAL" and "decode" in message.lower()


def run(ctx):
    pb, cases, channel = ctx.pb, ctx.cases, ctx.channel
    worker_auth = bearer(ctx.args.worker_token)
    admin = bearer(ctx.args.admin_token)
    rng = random.Random(34)

    # A user's personal token (from cases_outside), so that the account and
    # registry methods reach their handlers.
    personal = bearer(ctx.personal)

    def auth_for(name):
        if name in OPEN:
            return ()
        return worker_auth if name in WORK or name in READ else personal

    # 600 random byte strings to every method, the standard services' too
    # (without a token), 16 at a time.
    jobs = []
    for path, cs, ss in methods(pb) + STANDARD:
        name = path.rsplit("/", 1)[1]
        auth = () if path.startswith("/grpc.") else auth_for(name)
        for _ in range(RANDOM_PER_METHOD):
            payload = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 48)))
            jobs.append((path, cs, ss, payload, auth))
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda j: (j[0], raw_call(channel, *j[:4], j[4], timeout=20)),
                                jobs))
    by_method = {}
    for path, (code, message, _) in answers:
        tally = by_method.setdefault(path, {"codes": {}, "bad": []})
        tally["codes"][code] = tally["codes"].get(code, 0) + 1
        fine = (undecodable(code, message) or code in HANDLER_CODES) \
            and len(message.encode()) <= MAX_MESSAGE_BYTES
        if not fine and len(tally["bad"]) < 3:
            tally["bad"].append(f"{code}: {message[:200]}")
    for path, tally in by_method.items():
        service, name = path.split("/")[1], path.rsplit("/", 1)[1]
        cases.record(f"{service}.{name}_with_{RANDOM_PER_METHOD}_random_byte_strings",
                     "BAD" if tally["bad"] else "REFUSED_OR_ANSWERED", "REFUSED_OR_ANSWERED",
                     "; ".join(tally["bad"]), codes=tally["codes"])

    submit = "/xq.cluster.v1.WorkerService/SubmitResult"
    # A 5 MiB request: over the 4 MiB the server decodes (tonic answers
    # OUT_OF_RANGE before any handler runs).
    code, message, _ = raw_call(channel, submit, False, False, os.urandom(5 << 20), worker_auth)
    cases.record("SubmitResult_of_5_MiB_of_bytes", code, "OUT_OF_RANGE", message)
    request = pb.SubmitResultRequest(worker_id=1, lease_id=1, results=pb.GameResults(
        games=[pb.GameRecord(stderr_tail="e" * (5 << 20))]))
    code, message, _ = raw_call(channel, submit, False, False, request.SerializeToString(),
                                worker_auth)
    cases.record("SubmitResult_with_a_5_MiB_field", code, "OUT_OF_RANGE", message)

    # A million entries in repeated fields, each message under 4 MiB.
    worker = ctx.rpc.WorkerServiceStub(channel)
    worker_id = worker.Register(pb.RegisterRequest(name="hostile-bytes", threads=1,
                                                   version="0.1.0"), metadata=worker_auth).worker_id
    results = pb.GameResults()
    results.games.extend(pb.GameRecord() for _ in range(1_000_000))
    results.totals.pentanomial.extend([0] * 5)
    huge = [
        ("SubmitResult_with_a_million_games", submit,
         pb.SubmitResultRequest(worker_id=worker_id, lease_id=1, results=results)),
        ("SubmitResult_with_a_million_pentanomial_entries", submit,
         pb.SubmitResultRequest(worker_id=worker_id, lease_id=1, results=pb.GameResults(
             totals=pb.Totals(pairs=1, pentanomial=[1] * 1_000_000)))),
        ("Heartbeat_with_a_million_leases", "/xq.cluster.v1.WorkerService/Heartbeat",
         pb.HeartbeatRequest(worker_id=worker_id,
                             leases=[pb.LeaseProgress(lease_id=1)] * 1_000_000)),
        ("CreateRun_with_a_million_params", "/xq.cluster.v1.RunService/CreateRun",
         pb.CreateRunRequest(spec=pb.RunSpec(name="huge", batch_pairs=1, spsa=pb.SpsaSpec(
             params=[pb.SpsaParam(name="p")] * 1_000_000)))),
    ]
    for name, path, message_ in huge:
        auth = admin if "CreateRun" in path else worker_auth
        payload = message_.SerializeToString()
        code, message, _ = raw_call(channel, path, False, False, payload, auth, timeout=60)
        cases.record(name, code, ["INVALID_ARGUMENT", "NOT_FOUND", "OUT_OF_RANGE"],
                     message, bytes=len(payload))

    # Nesting beyond the decoder's limit: unknown field 15 as groups inside
    # groups (prost stops at 100 levels), and a message cut mid-field.
    for depth in [101, 100_000]:
        nested = b"\x7b" * depth + b"\x7c" * depth
        code, message, _ = raw_call(channel, submit, False, False, nested, worker_auth)
        cases.record(f"SubmitResult_nested_{depth}_deep", code, "INTERNAL", message,
                     ok=undecodable(code, message))
    whole = pb.RegisterRequest(name="truncated-worker", threads=1,
                               version="0.1.0").SerializeToString()
    for cut in [1, len(whole) // 2, len(whole) - 1]:
        code, message, _ = raw_call(channel, "/xq.cluster.v1.WorkerService/Register", False,
                                    False, whole[:cut], worker_auth)
        cases.record(f"Register_cut_after_{cut}_of_{len(whole)}_bytes", code, "INTERNAL",
                     message, ok=undecodable(code, message))
