"""Calls from outside the roles: every method without a token, with a
token nobody has and with a revoked one; every method with the role that
may not call it; a developer on another user's run; oversized values of
the methods the team features added."""

from .common import bearer, methods, raw_call

# What each method needs (coordinator/src/access/mod.rs, `permission`).
WORK = {"Register", "RequestWork", "Heartbeat", "SubmitResult", "ReleaseLease",
        "ReportEngineMismatch", "ReportBuildFailure", "ReportEngineSpeed", "GetWorkerRelease",
        "ReportUpdateFailure"}
READ = {"ListRuns", "GetRun", "WatchRun", "ExportGames", "ListEngines", "ListAssets",
        "ListWorkerReleases", "DownloadBlob", "ListEvents"}
OPEN = {"Login"}


def run(ctx):
    pb, rpc, cases, channel = ctx.pb, ctx.rpc, ctx.cases, ctx.channel
    worker_auth = bearer(ctx.args.worker_token)
    admin = bearer(ctx.args.admin_token)
    every = methods(pb)

    # Without a token, with a token nobody has: every method but Login.
    for path, cs, ss in every:
        name = path.rsplit("/", 1)[1]
        service = path.split("/")[1].rsplit(".", 1)[1]
        if name in OPEN:
            continue
        for label, metadata in [("without_token", ()), ("with_an_unknown_token",
                                                        bearer("xqt_" + "0" * 64))]:
            code, message, _ = raw_call(channel, path, cs, ss, b"", metadata)
            cases.record(f"{service}.{name}_{label}", code, "UNAUTHENTICATED", message)

    # The role that may not call it: a worker token on what needs a
    # personal one, a personal token on a worker's methods.
    for path, cs, ss in every:
        name = path.rsplit("/", 1)[1]
        service = path.split("/")[1].rsplit(".", 1)[1]
        if name in OPEN or name in READ:
            continue
        wrong = admin if name in WORK else worker_auth
        code, message, _ = raw_call(channel, path, cs, ss, b"", wrong)
        cases.record(f"{service}.{name}_with_the_wrong_role", code, "PERMISSION_DENIED", message)

    # A revoked token: made, used, revoked, refused.
    accounts = rpc.AccountServiceStub(channel)
    worker = rpc.WorkerServiceStub(channel)
    personal = accounts.Login(pb.LoginRequest(user=ctx.args.user, password=ctx.args.password))
    mine = bearer(personal.token)
    ctx.personal = personal.token
    made = accounts.CreateToken(pb.CreateTokenRequest(name="hostile-revoked",
                                                      role=pb.TOKEN_ROLE_WORKER), metadata=mine)
    revocable = bearer(made.token)
    register = pb.RegisterRequest(name="revoked-box", threads=1, version="0.1.0")
    cases.expect("Register_before_its_token_is_revoked",
                 lambda: worker.Register(register, metadata=revocable), "OK")
    accounts.RevokeToken(pb.RevokeTokenRequest(name="hostile-revoked"), metadata=mine)
    cases.expect("Register_with_a_revoked_token",
                 lambda: worker.Register(register, metadata=revocable), "UNAUTHENTICATED")
    cases.expect("ListRuns_with_a_revoked_token",
                 lambda: rpc.RunServiceStub(channel).ListRuns(pb.ListRunsRequest(),
                                                              metadata=revocable),
                 "UNAUTHENTICATED")

    # A developer on a run that is not theirs (made by a token of no user).
    runs = rpc.RunServiceStub(channel)
    run_id = ctx.runs[0]
    # Approving or rejecting an active run is refused for its state first
    # (which GetRun shows anyone); nothing changes either way.
    for method, request, expected in [
        ("StopRun", pb.StopRunRequest(run_id=run_id), "PERMISSION_DENIED"),
        ("ModifyRun", pb.ModifyRunRequest(run_id=run_id, priority=1), "PERMISSION_DENIED"),
        ("ResumeRun", pb.ResumeRunRequest(run_id=run_id), "PERMISSION_DENIED"),
        ("ApproveRun", pb.ApproveRunRequest(run_id=run_id),
         ["PERMISSION_DENIED", "INVALID_ARGUMENT"]),
        ("RejectRun", pb.RejectRunRequest(run_id=run_id, reason="not mine"),
         ["PERMISSION_DENIED", "INVALID_ARGUMENT"]),
    ]:
        call = getattr(runs, method)
        cases.expect(f"{method}_of_another_users_run", lambda: call(request, metadata=mine),
                     expected)
    state = runs.GetRun(pb.GetRunRequest(run_id=run_id), metadata=admin).run
    cases.record("another_users_run_unchanged",
                 "UNCHANGED" if (pb.RunState.Name(state.state), state.spec.priority)
                 == ("RUN_STATE_ACTIVE", 0) else "CHANGED", "UNCHANGED",
                 f"{pb.RunState.Name(state.state)}, priority {state.spec.priority}")

    # The users: a developer's personal token, and a personal token of no
    # user, may not add, list or change them (an admin's may; the command
    # line's in-process administrator is no token at all).
    users = rpc.AdminServiceStub(channel)
    for label, metadata in [("as_a_developer", mine), ("with_a_token_of_no_user", admin)]:
        for method, request in [
            ("AddUser", pb.AddUserRequest(name="mallory", role=pb.USER_ROLE_ADMIN)),
            ("ListUsers", pb.ListUsersRequest()),
            ("SetUser", pb.SetUserRequest(name=ctx.args.user, role=pb.USER_ROLE_ADMIN)),
        ]:
            call = getattr(users, method)
            cases.expect(f"{method}_{label}",
                         lambda: call(request, metadata=metadata), "PERMISSION_DENIED")
    cases.expect("ListEvents_as_a_worker",
                 lambda: users.ListEvents(pb.ListEventsRequest(limit=5), metadata=worker_auth),
                 "OK")

    # Oversized values of the newer methods (the earlier ones are in
    # tests/py/hostile_client.py).
    big = "x" * 100_000
    cases.expect("CreateRun_with_a_name_of_100000_bytes",
                 lambda: runs.CreateRun(pb.CreateRunRequest(spec=pb.RunSpec(name=big)),
                                        metadata=admin), "INVALID_ARGUMENT")
    cases.expect("GetWorkerRelease_with_a_target_of_100000_bytes",
                 lambda: worker.GetWorkerRelease(pb.GetWorkerReleaseRequest(target=big),
                                                 metadata=worker_auth), "INVALID_ARGUMENT")
    cases.expect("ReportEngineMismatch_with_a_sha256_of_100000_bytes",
                 lambda: worker.ReportEngineMismatch(
                     pb.ReportEngineMismatchRequest(worker_id=1, sha256=big),
                     metadata=worker_auth), ["INVALID_ARGUMENT", "PERMISSION_DENIED"])
    cases.expect("ExportGames_with_a_filter_of_100000_bytes",
                 lambda: list(runs.ExportGames(pb.ExportGamesRequest(
                     run_id=run_id, filter=pb.GameFilter(reason=big)),
                                               metadata=admin)), "INVALID_ARGUMENT")
    cases.expect("DownloadBlob_of_a_sha256_of_100000_bytes",
                 lambda: list(worker.DownloadBlob(pb.DownloadBlobRequest(sha256=big),
                                                  metadata=worker_auth)), "INVALID_ARGUMENT")

    # Datagen specs: each bad value refused naming its field, and none of
    # them makes a run; the same spec with good values is taken.
    def datagen(limit=None, keep=None, openings=None, **kind):
        spec = dict(pairs=4)
        spec.update(kind)
        return pb.CreateRunRequest(spec=pb.RunSpec(
            name="hostile datagen", batch_pairs=2,
            keep_games=keep or pb.GAME_RETENTION_ALL,
            settings=pb.MatchSettings(
                limit=limit or pb.Limit(nodes=400), hash_mb=1, rules="standard", seed=1,
                openings=openings or pb.OpeningSource(
                    builtin=pb.BuiltinOpenings(random_plies=4)),
                adjudication=pb.Adjudication(resign_cp=1000, resign_moves=4, draw_cp=10,
                                             draw_moves=8, draw_after_move=40,
                                             max_plies=400)),
            datagen=pb.DatagenSpec(**spec)))

    start = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
    before = len(runs.ListRuns(pb.ListRunsRequest(), metadata=admin).runs)
    for name, request, needle in [
        ("at_a_depth", datagen(limit=pb.Limit(depth=6)), "spec.settings.limit"),
        ("keeping_only_decisive_games", datagen(keep=pb.GAME_RETENTION_DECISIVE),
         "spec.keep_games"),
        ("of_no_pairs", datagen(pairs=0), "datagen.pairs"),
        ("with_options_but_no_engine", datagen(engine_options={"Hash": "16"}),
         "datagen.engine_options"),
        ("with_an_unknown_parameter", datagen(params={"queen_value": 900}),
         "datagen.params"),
        ("of_an_unregistered_engine", datagen(engine="nobody"), "nobody"),
        ("with_41_random_plies_after_its_lines", datagen(openings=pb.OpeningSource(
            lines=pb.OpeningLines(lines=[start], random_plies=41))),
         "settings.openings.lines.random_plies"),
        ("with_41_random_plies_after_its_book", datagen(openings=pb.OpeningSource(
            book=pb.OpeningBook(sha256="ab" * 32, random_plies=41))),
         "settings.openings.book.random_plies"),
    ]:
        cases.expect(f"CreateRun_datagen_{name}",
                     lambda: runs.CreateRun(request, metadata=admin),
                     ["INVALID_ARGUMENT", "NOT_FOUND"], needle)
    cases.expect("CreateRun_datagen_by_a_worker_token",
                 lambda: runs.CreateRun(datagen(), metadata=worker_auth), "PERMISSION_DENIED")
    after = len(runs.ListRuns(pb.ListRunsRequest(), metadata=admin).runs)
    cases.record("datagen_refusals_made_no_run", "NONE" if after == before else "MADE", "NONE",
                 f"{after - before} runs made")
    cases.expect("CreateRun_datagen_with_a_line_and_random_plies",
                 lambda: runs.CreateRun(datagen(openings=pb.OpeningSource(
                     lines=pb.OpeningLines(lines=[start + " moves h2e2 h9g7"],
                                           random_plies=6))), metadata=admin), "OK")
