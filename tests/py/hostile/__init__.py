"""The hostile suite: a client that is not the project's own (grpcio, stubs
generated from proto/xq/cluster/v1/cluster.proto at test time) does what a
hostile or broken client would against a served coordinator, then checks
through the API and the database file that nothing was lost or doubled.

Run as `python -m hostile GROUP ...` from tests/py (see __main__.py); each
group is one module:

  * outside: every method without a token, a revoked token, wrong roles,
    600 random byte strings to every method, a 5 MiB request, huge repeated
    fields, deeply nested and truncated messages (cases_outside.py,
    cases_bytes.py);
  * results: another worker's id or lease, a 4-entry pentanomial, illegal
    move bytes, a garbage FEN, fabricated checkmates, replayed and
    reordered submissions, another run's lease, a lapsed lease, a worker
    that never heartbeats (cases_results.py);
  * floods: 3,200 concurrent reads, floods above the rate limits,
    slow-loris connections (cases_floods.py).
"""
