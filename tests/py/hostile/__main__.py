"""Runs one group of hostile cases against a served coordinator, then the
totals check; prints one JSON object as its last line (the cases, the
check, and whether the server still answers) and exits 1 if a case or the
check failed. Lines before it ask the test for honest results (common.honest).

    python -m hostile GROUP --url HOST:PORT --db PATH --proto-dir proto \\
        --admin-token T --worker-token T --other-worker-token T \\
        --user NAME --password P --runs 1,2
"""

import argparse
import json
import sys
import time
import types

import grpc

from . import cases_bytes, cases_floods, cases_outside, cases_results, totals
from .common import Cases, stubs

GROUPS = {
    "outside": [cases_outside.run, cases_bytes.run],
    "results": [cases_results.run],
    "floods": [cases_floods.run],
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("group", choices=sorted(GROUPS))
    ap.add_argument("--url", required=True, help="host:port of the coordinator")
    ap.add_argument("--db", required=True, help="its database file, read read-only")
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--admin-token", required=True, help="a personal token without a user")
    ap.add_argument("--worker-token", required=True)
    ap.add_argument("--other-worker-token", required=True, help="another worker token")
    ap.add_argument("--user", required=True, help="a developer who may sign in")
    ap.add_argument("--password", required=True)
    ap.add_argument("--runs", required=True, help="the active runs, comma-separated")
    args = ap.parse_args()

    pb, rpc = stubs(args.proto_dir)
    options = [("grpc.max_send_message_length", 64 << 20),
               ("grpc.max_receive_message_length", 64 << 20)]
    channel = grpc.insecure_channel(args.url, options=options)
    ctx = types.SimpleNamespace(
        args=args, pb=pb, rpc=rpc, channel=channel, cases=Cases(), accepted={},
        runs=[int(r) for r in args.runs.split(",")],
    )
    started = time.monotonic()
    for group in GROUPS[args.group]:
        group(ctx)
    check = totals.check(ctx)
    failed = ctx.cases.failed()
    print(json.dumps({
        "cases": ctx.cases.cases,
        "failed": sorted(failed),
        "check": check,
        "seconds": round(time.monotonic() - started, 1),
    }), flush=True)
    return 0 if not failed and check["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
