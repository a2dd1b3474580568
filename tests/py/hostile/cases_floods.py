"""Floods against a server with real rate limits and short connection
timeouts: slow-loris connections (silent, a preface trickled byte by byte,
a request's HEADERS frame trickled after a whole preface) while honest
calls go on; 3,200 concurrent reads; floods of calls, of sign-ins and of
health checks above their limits. The server must answer the excess
RESOURCE_EXHAUSTED, drop the slow clients, and keep answering."""

import socket
import time

from .common import bearer, raw_call

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
# A HEADERS frame header announcing 64 bytes of header block on stream 1.
HEADERS = b"\x00\x00\x40\x01\x04\x00\x00\x00\x01" + b"\x00" * 64
# How long a slow client may last: the test's preface timeout and keepalive
# (2 s, 1 s + 1 s) with a wide margin; a bound on a hang, not a measurement.
DROPPED_WITHIN = 30.0


def slow_loris(ctx):
    host, port = ctx.args.url.rsplit(":", 1)
    scripts = ([("silent", b"")] * 30 + [("preface_byte_by_byte", PREFACE)] * 30
               + [("headers_byte_by_byte", HEADERS)] * 30)
    conns = []
    for kind, script in scripts:
        s = socket.create_connection((host, int(port)))
        if kind == "headers_byte_by_byte":
            s.sendall(PREFACE + SETTINGS)
        s.setblocking(False)
        conns.append({"kind": kind, "sock": s, "script": script, "sent": 0, "closed": None})
    runs = ctx.rpc.RunServiceStub(ctx.channel)
    admin = bearer(ctx.args.admin_token)
    honest = {"ok": 0, "failed": []}
    started = time.monotonic()
    while time.monotonic() - started < DROPPED_WITHIN:
        now = time.monotonic() - started
        for c in conns:
            if c["closed"] is not None:
                continue
            try:
                if c["sent"] < len(c["script"]):
                    c["sock"].send(c["script"][c["sent"]:c["sent"] + 1])
                    c["sent"] += 1
                while True:
                    data = c["sock"].recv(4096)
                    if data == b"":
                        c["closed"] = now
                        break
            except BlockingIOError:
                pass
            except OSError:
                c["closed"] = now
        try:
            runs.ListRuns(ctx.pb.ListRunsRequest(), metadata=admin, timeout=10)
            honest["ok"] += 1
        except Exception as e:  # noqa: BLE001 - any failure of an honest call counts
            honest["failed"].append(str(e)[:200])
        if all(c["closed"] is not None for c in conns):
            break
        time.sleep(0.2)
    for c in conns:
        c["sock"].close()
    by_kind = {}
    for c in conns:
        k = by_kind.setdefault(c["kind"], {"open": 0, "last_closed_s": 0.0})
        if c["closed"] is None:
            k["open"] += 1
        else:
            k["last_closed_s"] = max(k["last_closed_s"], round(c["closed"], 1))
    for kind, k in by_kind.items():
        ctx.cases.record(f"slow_loris_{kind}_dropped", "DROPPED" if k["open"] == 0 else "KEPT",
                         "DROPPED", f"{k['open']} still open", **k)
    ctx.cases.record("honest_calls_during_slow_loris",
                     "ANSWERED" if honest["ok"] > 0 and not honest["failed"] else "FAILED",
                     "ANSWERED", "; ".join(honest["failed"][:3]), answered=honest["ok"])


def tally(codes):
    out = {}
    for c in codes:
        out[c] = out.get(c, 0) + 1
    return out


def flood(ctx, name, codes, allowed):
    """Records a flood: only `allowed` codes, some refused, some answered."""
    t = tally(codes)
    fine = set(t) <= set(allowed) and t.get("RESOURCE_EXHAUSTED", 0) > 0 \
        and len(t) > 1
    ctx.cases.record(name, "LIMITED" if fine else "NOT_LIMITED", "LIMITED", str(t), codes=t)


def at_once(n, start):
    """Starts `n` calls, then waits for all: their codes."""
    futures = [start() for _ in range(n)]
    codes = []
    for f in futures:
        try:
            f.result()
            codes.append("OK")
        except Exception as e:  # noqa: BLE001 - grpc.RpcError carries the code
            codes.append(e.code().name if hasattr(e, "code") else repr(e)[:80])
    return codes


def run(ctx):
    pb, rpc = ctx.pb, ctx.rpc
    slow_loris(ctx)

    runs = rpc.RunServiceStub(ctx.channel)
    worker_auth = bearer(ctx.args.worker_token)
    admin = bearer(ctx.args.admin_token)
    request = pb.GetRunRequest(run_id=ctx.runs[0])
    flood(ctx, "GetRun_3200_concurrent_reads",
          at_once(3200, lambda: runs.GetRun.future(request, metadata=worker_auth, timeout=60)),
          {"OK", "RESOURCE_EXHAUSTED"})
    flood(ctx, "ListRuns_flood_of_400_with_a_personal_token",
          at_once(400, lambda: runs.ListRuns.future(pb.ListRunsRequest(), metadata=admin,
                                                    timeout=60)),
          {"OK", "RESOURCE_EXHAUSTED"})

    accounts = rpc.AccountServiceStub(ctx.channel)
    codes = []
    for _ in range(30):
        try:
            accounts.Login(pb.LoginRequest(user=ctx.args.user, password="wrong"), timeout=30)
            codes.append("OK")
        except Exception as e:  # noqa: BLE001
            codes.append(e.code().name)
    flood(ctx, "Login_flood_of_30_wrong_passwords", codes, {"UNAUTHENTICATED", "RESOURCE_EXHAUSTED"})

    check = ctx.channel.unary_unary("/grpc.health.v1.Health/Check")
    flood(ctx, "Health_Check_flood_of_400_without_a_token",
          at_once(400, lambda: check.future(b"", timeout=60)), {"OK", "RESOURCE_EXHAUSTED"})

    # The limits refill: after a pause, each caller is answered again.
    time.sleep(3)
    ctx.cases.expect("GetRun_after_the_flood", lambda: runs.GetRun(request, metadata=worker_auth),
                     "OK")
    ctx.cases.expect("ListRuns_after_the_flood",
                     lambda: runs.ListRuns(pb.ListRunsRequest(), metadata=admin), "OK")
    code, message, _ = raw_call(ctx.channel, "/grpc.health.v1.Health/Check", False, False, b"")
    ctx.cases.record("Health_Check_after_the_flood", code, "OK", message)
