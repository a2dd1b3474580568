"""What every group shares: the generated stubs, the record of cases, the
honest-result oracle and calls by raw path."""

import json
import os
import sys
import tempfile

import grpc

# A refusal's message is kept short: the server quotes at most a prefix.
MAX_MESSAGE_BYTES = 1024


def stubs(proto_dir: str):
    """Generates and imports the Python stubs of cluster.proto."""
    from grpc_tools import protoc
    import importlib.resources

    out = tempfile.mkdtemp(prefix="xq-stubs-")
    include = str(importlib.resources.files("grpc_tools") / "_proto")
    source = os.path.join("xq", "cluster", "v1", "cluster.proto")
    status = protoc.main([
        "protoc", f"-I{proto_dir}", f"-I{include}", f"--python_out={out}",
        f"--grpc_python_out={out}", os.path.join(proto_dir, source),
    ])
    if status != 0:
        sys.exit(f"protoc failed on {source} ({status})")
    sys.path.insert(0, out)
    from xq.cluster.v1 import cluster_pb2, cluster_pb2_grpc

    return cluster_pb2, cluster_pb2_grpc


def bearer(token: str):
    return (("authorization", f"Bearer {token}"),)


class Cases:
    """Each case's outcome: the code it got, the code(s) it should get, and
    whether its message stayed short."""

    def __init__(self):
        self.cases = {}

    def record(self, name: str, got: str, expected, message: str = "", ok=None, **extra):
        expected = [expected] if isinstance(expected, str) else list(expected)
        size = len(message.encode())
        if ok is None:
            ok = got in expected
        self.cases[name] = {
            "code": got, "expected": expected, "message": message[:300],
            "message_bytes": size, "ok": bool(ok) and size <= MAX_MESSAGE_BYTES, **extra,
        }

    def expect(self, name: str, call, expected, needle: str = ""):
        """Makes `call` and records its code against `expected`; the
        answer of a call that succeeds, else None."""
        try:
            answer = call()
            self.record(name, "OK", expected)
            return answer
        except grpc.RpcError as e:
            message = e.details() or ""
            code = e.code().name
            ok = code in ([expected] if isinstance(expected, str) else expected) and needle in message
            self.record(name, code, expected, message, ok=ok)
            return None

    def failed(self):
        return {k: v for k, v in self.cases.items() if not v["ok"]}


def honest(lease_bytes: bytes, pb):
    """The honest result of a lease (every game drawn by adjudication after
    its opening, with its games), asked of the test that runs us: one JSON
    line out, one hex line back."""
    print(json.dumps({"drawn": lease_bytes.hex()}), flush=True)
    line = sys.stdin.readline().strip()
    if not line:
        sys.exit("no honest result came back")
    results = pb.GameResults()
    results.ParseFromString(bytes.fromhex(line))
    return results


# The standard services, open without a token: (path, client streaming,
# server streaming).
STANDARD = [
    ("/grpc.health.v1.Health/Check", False, False),
    ("/grpc.health.v1.Health/Watch", False, True),
    ("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", True, True),
    ("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", True, True),
]


def methods(pb):
    """Every RPC of the proto: (path, client streaming, server streaming)."""
    out = []
    for service in pb.DESCRIPTOR.services_by_name.values():
        for m in service.methods:
            out.append((f"/{service.full_name}/{m.name}", m.client_streaming, m.server_streaming))
    return out


def raw_call(channel, path, client_streaming, server_streaming, payload: bytes, metadata=(),
             timeout=30.0):
    """Sends `payload` as the request bytes of `path`, with no serializer; the
    code, the message and the count of answers."""
    try:
        if client_streaming and server_streaming:
            answers = channel.stream_stream(path)(iter([payload]), metadata=metadata,
                                                  timeout=timeout)
            got = next(answers, None)
            answers.cancel()
            return "OK", "", int(got is not None)
        if client_streaming:
            call = channel.stream_unary(path)
            call(iter([payload]), metadata=metadata, timeout=timeout)
            return "OK", "", 1
        if server_streaming:
            # The first answer (or the end) is enough: a watch never ends.
            answers = channel.unary_stream(path)(payload, metadata=metadata, timeout=timeout)
            got = next(answers, None)
            answers.cancel()
            return "OK", "", int(got is not None)
        channel.unary_unary(path)(payload, metadata=metadata, timeout=timeout)
        return "OK", "", 1
    except grpc.RpcError as e:
        return e.code().name, e.details() or "", 0
