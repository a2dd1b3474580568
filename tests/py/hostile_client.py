#!/usr/bin/env python3
"""A client that is not the project's own, speaking only the published
protocol: stubs generated from proto/xq/cluster/v1/cluster.proto with
grpcio-tools, calls made with grpcio.

It holds a worker token, registers, takes one lease and then tries what a
hostile or broken worker would:

  * counts without their games (a pair count, wins and a pentanomial, no
    game records),
  * fewer game records than the lease has pairs,
  * a Register whose name is 100,000 bytes long.

Then the run-management methods (ApproveRun, RejectRun, ResumeRun,
ModifyRun) with a worker token or none, and with the admin token on values
each must refuse with its code.

Each must be refused with INVALID_ARGUMENT naming the field; the long name's
refusal must arrive as a refusal (not a broken stream because its message
overflowed the client's metadata limit) and quote the name short. Prints one
JSON object: its worker id, the lease it held (serialized, in hex) and each
attempt's code and message. Exits 1
if an attempt was not refused as it should be.

It then calls the account service: Login without values, with a wrong
password and with 100,000-byte fields (no token needed), and the token
methods without a token, with a worker token, with a token of no user, and
with a signed-in user's token on another user's token.

And the registry service: UploadBlob with a worker token, none, a token of
no user; with the signed-in user's token data before the header, a header
without a purpose, a worker release (a developer may not register one), a
100,000-byte SHA-256, more than 1 GiB announced, bytes that hash to
something else, a message over 1 MiB, two headers; AddAsset and AddEngine
of nothing uploaded, with a 100,000-byte name, without an engine, as a
worker.

And the worker's reports on its lease: ReportEngineSpeed without a token,
with a method that is none, on a run without a speed rule, for a lease it
does not hold; ReportBuildFailure without a token and for a lease it does
not hold; the worker-release methods without a token, AddWorkerRelease as a
worker, ReportUpdateFailure with a 100,000-byte reason and for an unknown
worker.

The rest of the hostile suite (no token on every method, lying results,
random bytes, floods, slow-loris, ...) is the package tests/py/hostile/.

    hostile_client.py --url 127.0.0.1:PORT --token TOKEN --admin-token TOKEN \
        --run RUN --user NAME --password PASSWORD --other-token NAME --proto-dir proto
"""

import argparse
import json
import os
import sys
import tempfile


def stubs(proto_dir: str):
    """Generates and imports the Python stubs of cluster.proto."""
    from grpc_tools import protoc
    import importlib.resources

    out = tempfile.mkdtemp(prefix="xq-stubs-")
    include = str(importlib.resources.files("grpc_tools") / "_proto")
    source = os.path.join("xq", "cluster", "v1", "cluster.proto")
    status = protoc.main([
        "protoc",
        f"-I{proto_dir}",
        f"-I{include}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        os.path.join(proto_dir, source),
    ])
    if status != 0:
        sys.exit(f"protoc failed on {source} ({status})")
    sys.path.insert(0, out)
    from xq.cluster.v1 import cluster_pb2, cluster_pb2_grpc

    return cluster_pb2, cluster_pb2_grpc


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True, help="host:port of the coordinator")
    ap.add_argument("--token", required=True, help="a worker token")
    ap.add_argument("--admin-token", required=True, help="an admin token without a user")
    ap.add_argument("--run", type=int, required=True, help="an active run")
    ap.add_argument("--user", required=True, help="a user who may sign in")
    ap.add_argument("--password", required=True, help="that user's password")
    ap.add_argument("--other-token", required=True, help="the name of another user's token")
    ap.add_argument("--proto-dir", required=True)
    args = ap.parse_args()

    import grpc

    pb, rpc = stubs(args.proto_dir)
    channel = grpc.insecure_channel(args.url)
    worker = rpc.WorkerServiceStub(channel)
    auth = (("authorization", f"Bearer {args.token}"),)

    worker_id = worker.Register(
        pb.RegisterRequest(name="hostile", threads=1, version="0.1.0"), metadata=auth
    ).worker_id
    lease = worker.RequestWork(
        pb.RequestWorkRequest(worker_id=worker_id), metadata=auth
    ).lease
    pairs = lease.work.pairs

    def totals(wins: int) -> "pb.Totals":
        return pb.Totals(
            pairs=pairs,
            pentanomial=[0, 0, 0, 0, pairs],
            wins=wins,
            reasons={"checkmate": wins},
            total_plies=80 * wins,
        )

    attempts = {}

    def attempt(name: str, call, field: str):
        try:
            answer = call()
            attempts[name] = {"code": "OK", "answer": str(answer)[:200], "ok": False}
        except grpc.RpcError as e:
            code, message = e.code().name, e.details() or ""
            attempts[name] = {
                "code": code,
                "message": message[:400],
                "message_bytes": len(message.encode()),
                "ok": code == "INVALID_ARGUMENT" and field in message,
            }

    def submit(games):
        """SubmitResult for the lease: all its pairs won, with `games`."""
        return lambda: worker.SubmitResult(
            pb.SubmitResultRequest(
                worker_id=worker_id,
                lease_id=lease.lease_id,
                results=pb.GameResults(totals=totals(2 * pairs), games=games),
            ),
            metadata=auth,
        )

    one_game = pb.GameRecord(
        opening_index=lease.work.openings.offset,
        start_fen="rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
        result=pb.GAME_RESULT_RED_WINS,
        reason="checkmate",
    )
    attempt("result_without_games", submit([]), "results.games")
    attempt("fewer_games_than_pairs", submit([one_game]), "results.games")
    attempt(
        "name_of_100000_bytes",
        lambda: worker.Register(
            pb.RegisterRequest(name="n" * 100_000, threads=1, version="0.1.0"),
            metadata=auth,
        ),
        "(100000 bytes)",
    )
    attempt(
        "machine_id_of_100000_bytes",
        lambda: worker.Register(
            pb.RegisterRequest(name="m", threads=1, version="0.1.0", machine_id="m" * 100_000),
            metadata=auth,
        ),
        "machine_id",
    )
    # The run-management methods (approve, reject, resume): a worker token or
    # none is refused; an admin's bad values are named refusals.
    runs = rpc.RunServiceStub(channel)
    admin = (("authorization", f"Bearer {args.admin_token}"),)
    refusals = {}

    def refused(name: str, call, code: str, needle: str = ""):
        try:
            answer = call()
            refusals[name] = {"code": "OK", "answer": str(answer)[:200], "ok": False}
        except grpc.RpcError as e:
            got, message = e.code().name, e.details() or ""
            refusals[name] = {
                "code": got,
                "expected": code,
                "message": message[:400],
                "message_bytes": len(message.encode()),
                "ok": got == code and needle in message,
            }

    approve = pb.ApproveRunRequest(run_id=args.run)
    reject = pb.RejectRunRequest(run_id=args.run, reason="no")
    resume = pb.ResumeRunRequest(run_id=args.run)
    modify = pb.ModifyRunRequest(run_id=args.run, priority=1)
    for method, request in [("ApproveRun", approve), ("RejectRun", reject), ("ResumeRun", resume),
                            ("ModifyRun", modify)]:
        call = getattr(runs, method)
        refused(f"{method}_as_worker", lambda: call(request, metadata=auth), "PERMISSION_DENIED")
        refused(f"{method}_without_token", lambda: call(request), "UNAUTHENTICATED")
    refused("approve_an_active_run", lambda: runs.ApproveRun(approve, metadata=admin),
            "INVALID_ARGUMENT", "not pending")
    refused("resume_an_active_run", lambda: runs.ResumeRun(resume, metadata=admin),
            "INVALID_ARGUMENT", "only a stopped run resumes")
    refused("approve_an_unknown_run",
            lambda: runs.ApproveRun(pb.ApproveRunRequest(run_id=999_999), metadata=admin),
            "NOT_FOUND", "999999")
    refused("reject_without_a_reason",
            lambda: runs.RejectRun(pb.RejectRunRequest(run_id=args.run), metadata=admin),
            "INVALID_ARGUMENT", "reason")
    refused("reject_with_a_reason_of_100000_bytes",
            lambda: runs.RejectRun(pb.RejectRunRequest(run_id=args.run, reason="r" * 100_000),
                                   metadata=admin),
            "INVALID_ARGUMENT", "reason")

    # ModifyRun with an admin token: an unknown run, nothing to change, and
    # values out of range (a share is unsigned on the wire, so 0 and one
    # over the largest); the run has handed out one lease of 2 pairs.
    def modify_run(**fields):
        return lambda: runs.ModifyRun(pb.ModifyRunRequest(**fields), metadata=admin)

    refused("modify_an_unknown_run", modify_run(run_id=999_999, priority=1),
            "NOT_FOUND", "999999")
    refused("modify_nothing", modify_run(run_id=args.run), "INVALID_ARGUMENT",
            "nothing to change")
    refused("modify_with_a_share_of_0", modify_run(run_id=args.run, share=0),
            "INVALID_ARGUMENT", "share")
    refused("modify_with_a_share_of_4000000000",
            modify_run(run_id=args.run, share=4_000_000_000), "INVALID_ARGUMENT", "share")
    refused("modify_with_a_cap_of_0", modify_run(run_id=args.run, pairs=0),
            "INVALID_ARGUMENT", "pairs")
    refused("modify_with_a_cap_below_the_pairs_handed_out",
            modify_run(run_id=args.run, pairs=1), "INVALID_ARGUMENT", "handed out 2 pairs")

    # The account service: Login is the one call without a token; its bad
    # values are named refusals, a wrong password is UNAUTHENTICATED. Token
    # management needs a personal token of a user and touches only theirs.
    accounts = rpc.AccountServiceStub(channel)

    def login(user: str, password: str, token_name: str = ""):
        return lambda: accounts.Login(
            pb.LoginRequest(user=user, password=password, token_name=token_name)
        )

    refused("Login_with_nothing", login("", ""), "INVALID_ARGUMENT", "user")
    refused("Login_with_a_wrong_password", login(args.user, "garbage"), "UNAUTHENTICATED",
            "wrong user name or password")
    refused("Login_with_a_password_of_100000_bytes", login(args.user, "p" * 100_000),
            "INVALID_ARGUMENT", "password")
    refused("Login_with_a_user_of_100000_bytes", login("u" * 100_000, "x"),
            "INVALID_ARGUMENT", "(100000 bytes)")
    refused("Login_with_a_token_name_of_100000_bytes",
            login(args.user, args.password, "t" * 100_000), "INVALID_ARGUMENT", "token.name")
    personal = accounts.Login(
        pb.LoginRequest(user=args.user, password=args.password)
    ).token
    mine = (("authorization", f"Bearer {personal}"),)
    create = pb.CreateTokenRequest(name="hostile-box", role=pb.TOKEN_ROLE_WORKER)
    refused("CreateToken_without_token", lambda: accounts.CreateToken(create),
            "UNAUTHENTICATED")
    refused("CreateToken_as_worker", lambda: accounts.CreateToken(create, metadata=auth),
            "PERMISSION_DENIED")
    refused("CreateToken_with_a_token_of_no_user",
            lambda: accounts.CreateToken(create, metadata=admin), "PERMISSION_DENIED",
            "belongs to no user")
    refused("CreateToken_without_a_role",
            lambda: accounts.CreateToken(pb.CreateTokenRequest(name="x"), metadata=mine),
            "INVALID_ARGUMENT", "role")
    refused("CreateToken_with_a_name_of_100000_bytes",
            lambda: accounts.CreateToken(
                pb.CreateTokenRequest(name="n" * 100_000, role=pb.TOKEN_ROLE_WORKER),
                metadata=mine),
            "INVALID_ARGUMENT", "token.name")
    refused("RevokeToken_of_another_user",
            lambda: accounts.RevokeToken(pb.RevokeTokenRequest(name=args.other_token),
                                         metadata=mine),
            "PERMISSION_DENIED", "is not yours")
    refused("RevokeToken_as_worker",
            lambda: accounts.RevokeToken(pb.RevokeTokenRequest(name=args.other_token),
                                         metadata=auth),
            "PERMISSION_DENIED")

    # The registry: uploads and registrations need a personal token of a
    # user; a lying or malformed upload is a named refusal and stores
    # nothing.
    registry = rpc.RegistryServiceStub(channel)
    import hashlib

    blob = b"hostile bytes" * 1000
    sha = hashlib.sha256(blob).hexdigest()

    def header(sha256: str = sha, size: int = len(blob),
               purpose=pb.UploadPurpose(asset="hostile-net")):
        return pb.UploadBlobRequest(
            header=pb.UploadHeader(sha256=sha256, size=size, purpose=purpose))

    def data(b: bytes):
        return pb.UploadBlobRequest(data=b)

    def upload(messages, metadata=None):
        return lambda: registry.UploadBlob(iter(messages), metadata=metadata)

    refused("UploadBlob_as_worker", upload([header(), data(blob)], auth), "PERMISSION_DENIED")
    refused("UploadBlob_without_token", upload([header(), data(blob)]), "UNAUTHENTICATED")
    refused("UploadBlob_with_a_token_of_no_user", upload([header(), data(blob)], admin),
            "PERMISSION_DENIED", "belongs to no user")
    refused("UploadBlob_data_before_header", upload([data(blob)], mine), "INVALID_ARGUMENT",
            "header")
    refused("UploadBlob_without_a_purpose", upload([header(purpose=None), data(blob)], mine),
            "INVALID_ARGUMENT", "purpose")
    refused("UploadBlob_of_a_worker_release_by_a_developer",
            upload([header(purpose=pb.UploadPurpose(worker_release=pb.UploadWorkerRelease())),
                    data(blob)], mine),
            "PERMISSION_DENIED", "admin")
    refused("UploadBlob_with_a_sha256_of_100000_bytes",
            upload([header(sha256="a" * 100_000), data(blob)], mine), "INVALID_ARGUMENT",
            "(100000 bytes)")
    refused("UploadBlob_of_more_than_a_gib",
            upload([header(size=(1 << 30) + 1), data(blob)], mine), "INVALID_ARGUMENT",
            "header.size")
    refused("UploadBlob_of_other_bytes",
            upload([header(), data(blob[::-1])], mine), "INVALID_ARGUMENT",
            "not to the announced")
    refused("UploadBlob_with_a_message_over_a_mib",
            upload([header(size=(1 << 20) + 1), data(b"x" * ((1 << 20) + 1))], mine),
            "INVALID_ARGUMENT", "1048576")
    refused("UploadBlob_with_two_headers", upload([header(), header(), data(blob)], mine),
            "INVALID_ARGUMENT", "header")
    refused("AddAsset_of_no_upload",
            lambda: registry.AddAsset(pb.AddAssetRequest(name="net", sha256=sha, size=len(blob)),
                                      metadata=mine),
            "NOT_FOUND", "upload it first")
    refused("AddAsset_with_a_name_of_100000_bytes",
            lambda: registry.AddAsset(
                pb.AddAssetRequest(name="n" * 100_000, sha256=sha, size=len(blob)),
                metadata=mine),
            "INVALID_ARGUMENT", "asset.name")
    refused("AddAsset_as_worker",
            lambda: registry.AddAsset(pb.AddAssetRequest(name="net", sha256=sha, size=1),
                                      metadata=auth),
            "PERMISSION_DENIED")
    refused("AddEngine_without_engine",
            lambda: registry.AddEngine(pb.AddEngineRequest(), metadata=mine),
            "INVALID_ARGUMENT", "engine")
    engine = pb.EngineRef(name="e", sha256=sha, size=len(blob), signature=1,
                          protocol=pb.ENGINE_PROTOCOL_UCI)
    refused("AddEngine_of_no_upload",
            lambda: registry.AddEngine(pb.AddEngineRequest(engine=engine), metadata=mine),
            "NOT_FOUND", "upload it first")

    # The worker's reports on a lease: a speed on a run without a speed rule,
    # with a method that is not one, for a lease it does not hold, and a
    # build failure of a lease it does not hold; none without a token.
    def speed(**fields):
        request = pb.ReportEngineSpeedRequest(worker_id=worker_id, lease_id=lease.lease_id,
                                              nps=1_000_000, method="bench")
        for k, v in fields.items():
            setattr(request, k, v)
        return request

    refused("ReportEngineSpeed_without_token", lambda: worker.ReportEngineSpeed(speed()),
            "UNAUTHENTICATED")
    refused("ReportEngineSpeed_with_an_unknown_method",
            lambda: worker.ReportEngineSpeed(speed(method="x" * 100_000), metadata=auth),
            "INVALID_ARGUMENT", "method")
    refused("ReportEngineSpeed_on_a_run_without_a_speed_rule",
            lambda: worker.ReportEngineSpeed(speed(), metadata=auth),
            "FAILED_PRECONDITION", "no speed rule")
    refused("ReportEngineSpeed_for_a_lease_not_held",
            lambda: worker.ReportEngineSpeed(speed(lease_id=999_999), metadata=auth),
            "NOT_FOUND", "999999")
    failure = pb.ReportBuildFailureRequest(worker_id=worker_id, lease_id=999_999,
                                           commit="0" * 40, reason="broken", log_tail="")
    refused("ReportBuildFailure_without_token", lambda: worker.ReportBuildFailure(failure),
            "UNAUTHENTICATED")
    refused("ReportBuildFailure_for_a_lease_not_held",
            lambda: worker.ReportBuildFailure(failure, metadata=auth), "NOT_FOUND")

    # Worker releases: reading and registering them without a token, adding
    # one as a worker, and a worker's update report that is too long or
    # for a worker it did not register.
    refused("GetWorkerRelease_without_token",
            lambda: worker.GetWorkerRelease(pb.GetWorkerReleaseRequest(target="x86_64")),
            "UNAUTHENTICATED")
    refused("ListWorkerReleases_without_token",
            lambda: registry.ListWorkerReleases(pb.ListWorkerReleasesRequest()),
            "UNAUTHENTICATED")
    release = pb.WorkerRelease(version="9.9.9", target="x86_64-unknown-linux-gnu", sha256=sha,
                               size=len(blob), required=True)
    refused("AddWorkerRelease_without_token",
            lambda: registry.AddWorkerRelease(pb.AddWorkerReleaseRequest(release=release)),
            "UNAUTHENTICATED")
    refused("AddWorkerRelease_as_worker",
            lambda: registry.AddWorkerRelease(pb.AddWorkerReleaseRequest(release=release),
                                              metadata=auth),
            "PERMISSION_DENIED")
    update = pb.ReportUpdateFailureRequest(worker_id=worker_id, to_version="9.9.9",
                                           reason="r" * 100_000)
    refused("ReportUpdateFailure_without_token",
            lambda: worker.ReportUpdateFailure(update), "UNAUTHENTICATED")
    refused("ReportUpdateFailure_with_a_reason_of_100000_bytes",
            lambda: worker.ReportUpdateFailure(update, metadata=auth), "INVALID_ARGUMENT",
            "reason")
    refused("ReportUpdateFailure_for_an_unknown_worker",
            lambda: worker.ReportUpdateFailure(
                pb.ReportUpdateFailureRequest(worker_id=999_999, reason="no"), metadata=auth),
            "NOT_FOUND", "999999")

    ok = all(a["ok"] for a in attempts.values()) and all(r["ok"] for r in refusals.values())
    print(
        json.dumps(
            {
                "worker_id": worker_id,
                "lease": lease.SerializeToString().hex(),
                "attempts": attempts,
                "refusals": refusals,
            }
        )
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
