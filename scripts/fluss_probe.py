#!/usr/bin/env python3
"""Readiness probe for a Fluss 0.9.x cluster, speaking the Fluss wire protocol (stdlib only).

Frame (request):  int32 BE length | int16 api_key | int16 api_version | int32 request_id | protobuf body
Frame (response): int32 BE length | int8 type (0 ok, 1 error, 2 server failure) | int32 request_id | body
                  (type 2 carries no request id)

Checks, in order (each only when asked for):
  --zk HOST:PORT          ZooKeeper answers the 'ruok' four-letter word with 'imok'
  --bootstrap HOST:PORT   ApiVersions (1000 v0) answers SUCCESS, server_type 1 (coordinator),
                          then GetMetadata (1012 v0, empty body) lists >= --min-tablets tablet servers
  --tablet HOST:PORT      ApiVersions answers SUCCESS, server_type 2 (tablet server); repeatable
  --create-db NAME        CreateDatabase (1001 v0, ignore_if_exists=--ignore-if-exists) on the coordinator
                          and expects a SUCCESS response (type byte 0)

With --wait SECONDS the checks are retried until they all pass or the time runs out.
Exit code 0 = all checks passed; 1 = a check failed; 2 = usage error.
"""

import argparse
import json
import socket
import struct
import sys
import time

API_VERSIONS = 1000
CREATE_DATABASE = 1001
GET_METADATA = 1012

RESP_SUCCESS, RESP_ERROR, RESP_SERVER_FAILURE = 0, 1, 2
SERVER_TYPES = {1: "coordinator", 2: "tablet-server", -1: "unknown"}


class ProbeError(Exception):
    pass


# ---------------------------------------------------------------- protobuf (proto2) helpers
def enc_varint(v: int) -> bytes:
    if v < 0:
        v &= (1 << 64) - 1  # proto2 int32/int64 negatives are 10-byte two's complement
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def enc_key(field: int, wire_type: int) -> bytes:
    return enc_varint((field << 3) | wire_type)


def enc_string(field: int, s: str) -> bytes:
    b = s.encode("utf-8")
    return enc_key(field, 2) + enc_varint(len(b)) + b


def enc_bool(field: int, v: bool) -> bytes:
    return enc_key(field, 0) + enc_varint(1 if v else 0)


def dec_varint(buf: bytes, pos: int):
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ProbeError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ProbeError("varint too long")


def to_int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def dec_message(buf: bytes) -> dict:
    """Decode one protobuf message into {field: [values]}; wire types 0, 1, 2, 5."""
    fields = {}
    pos = 0
    while pos < len(buf):
        key, pos = dec_varint(buf, pos)
        field, wt = key >> 3, key & 7
        if wt == 0:
            val, pos = dec_varint(buf, pos)
        elif wt == 1:
            val = buf[pos:pos + 8]
            pos += 8
        elif wt == 2:
            ln, pos = dec_varint(buf, pos)
            val = buf[pos:pos + ln]
            if len(val) != ln:
                raise ProbeError("truncated length-delimited field")
            pos += ln
        elif wt == 5:
            val = buf[pos:pos + 4]
            pos += 4
        else:
            raise ProbeError(f"unsupported wire type {wt}")
        fields.setdefault(field, []).append(val)
    return fields


def first(fields: dict, n: int, default=None):
    v = fields.get(n)
    return v[0] if v else default


# ---------------------------------------------------------------- RPC
class Conn:
    def __init__(self, addr, timeout):
        host, port = parse_addr(addr)
        self.addr = f"{host}:{port}"
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.settimeout(timeout)
        self.next_id = 0

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def _recv_exact(self, n):
        chunks = bytearray()
        while len(chunks) < n:
            c = self.sock.recv(n - len(chunks))
            if not c:
                raise ProbeError(f"{self.addr}: connection closed by server")
            chunks += c
        return bytes(chunks)

    def call(self, api_key, api_version, body: bytes):
        """Send one request; return (response_type, request_id, body)."""
        req_id = self.next_id
        self.next_id += 1
        header = struct.pack(">hhi", api_key, api_version, req_id)
        self.sock.sendall(struct.pack(">i", len(header) + len(body)) + header + body)
        try:
            (length,) = struct.unpack(">i", self._recv_exact(4))
        except socket.timeout:
            raise ProbeError(f"{self.addr}: no response to api_key {api_key} (timeout)")
        frame = self._recv_exact(length)
        rtype = frame[0]
        if rtype == RESP_SERVER_FAILURE:
            err = dec_message(frame[1:])
            raise ProbeError(f"{self.addr}: SERVER_FAILURE {describe_error(err)}")
        (rid,) = struct.unpack(">i", frame[1:5])
        if rid != req_id:
            raise ProbeError(f"{self.addr}: response id {rid} != request id {req_id}")
        body = frame[5:]
        if rtype == RESP_ERROR:
            raise ProbeError(f"{self.addr}: ERROR_RESPONSE to api_key {api_key}: "
                             f"{describe_error(dec_message(body))}")
        if rtype != RESP_SUCCESS:
            raise ProbeError(f"{self.addr}: unknown response type {rtype}")
        return rtype, rid, body


def describe_error(err: dict) -> str:
    code = to_int32(first(err, 1, 0))
    msg = first(err, 2, b"").decode("utf-8", "replace")
    return f"error_code={code} message={msg!r}"


def parse_addr(s: str):
    host, _, port = s.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {s!r}")
    return host.strip("[]"), int(port)


def api_versions(conn: Conn) -> dict:
    body = enc_string(1, "fluss-writer-probe") + enc_string(2, "0.1")
    _, _, resp = conn.call(API_VERSIONS, 0, body)
    m = dec_message(resp)
    versions = {}
    for raw in m.get(1, []):
        v = dec_message(raw)
        versions[to_int32(first(v, 1))] = (to_int32(first(v, 2)), to_int32(first(v, 3)))
    server_type = to_int32(first(m, 2, (1 << 32) - 1))
    return {"server_type": server_type, "server_type_name": SERVER_TYPES.get(server_type, "?"),
            "api_versions": versions}


def server_node(raw: bytes) -> dict:
    n = dec_message(raw)
    d = {"node_id": to_int32(first(n, 1, 0)), "host": first(n, 2, b"").decode(),
         "port": to_int32(first(n, 3, 0))}
    if first(n, 4) is not None:
        d["listeners"] = first(n, 4).decode()
    if first(n, 5) is not None:
        d["rack"] = first(n, 5).decode()
    return d


def get_metadata(conn: Conn) -> dict:
    _, _, resp = conn.call(GET_METADATA, 0, b"")
    m = dec_message(resp)
    coord = first(m, 1)
    return {"coordinator": server_node(coord) if coord is not None else None,
            "tablet_servers": [server_node(r) for r in m.get(2, [])],
            "tables": len(m.get(3, []))}


def packed_int32s(raw) -> list:
    """A repeated int32 field's values: packed (bytes) or one varint per entry (ints)."""
    out = []
    for v in raw:
        if isinstance(v, (bytes, bytearray)):
            pos = 0
            while pos < len(v):
                x, pos = dec_varint(v, pos)
                out.append(to_int32(x))
        else:
            out.append(to_int32(v))
    return out


def table_leaders(conn: Conn, table: str) -> list:
    """[(bucket, leader or None, [replicas])] of DB.TABLE from GetMetadata with its path."""
    db, _, name = table.partition(".")
    body = enc_key(1, 2) + enc_varint(len(enc_string(1, db) + enc_string(2, name))) + enc_string(1, db) + enc_string(2, name)
    _, _, resp = conn.call(GET_METADATA, 0, body)
    out = []
    for tm in dec_message(resp).get(3, []):
        for bm in dec_message(tm).get(5, []):
            b = dec_message(bm)
            leader = first(b, 2)
            leader = to_int32(leader) if leader is not None else None
            out.append((to_int32(first(b, 1, 0)), None if leader == -1 else leader, packed_int32s(b.get(3, []))))
    return sorted(out)


def create_database(conn: Conn, name: str, ignore_if_exists: bool) -> int:
    body = enc_string(1, name) + enc_bool(2, ignore_if_exists)
    rtype, _, _ = conn.call(CREATE_DATABASE, 0, body)
    return rtype


def zk_ruok(addr, timeout) -> str:
    host, port = parse_addr(addr)
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.settimeout(timeout)
        s.sendall(b"ruok")
        data = b""
        while True:
            c = s.recv(64)
            if not c:
                break
            data += c
    if data != b"imok":
        raise ProbeError(f"zookeeper {addr}: 'ruok' answered {data!r}")
    return data.decode()


# ---------------------------------------------------------------- checks
def run_checks(args) -> dict:
    report = {}
    if args.zk:
        report["zookeeper"] = {"addr": args.zk, "ruok": zk_ruok(args.zk, args.timeout)}
    if args.bootstrap:
        c = Conn(args.bootstrap, args.timeout)
        try:
            av = api_versions(c)
            if av["server_type"] != 1 and not args.any_server_type:
                raise ProbeError(f"{c.addr}: server_type {av['server_type']} is not a coordinator (1)")
            md = get_metadata(c)
            if len(md["tablet_servers"]) < args.min_tablets:
                raise ProbeError(f"{c.addr}: {len(md['tablet_servers'])} tablet server(s) registered, "
                                 f"want >= {args.min_tablets}")
            entry = {"addr": c.addr, "server_type": av["server_type_name"],
                     "api_keys": len(av["api_versions"]),
                     "api_versions": {str(k): list(v) for k, v in sorted(av["api_versions"].items())},
                     "metadata": md}
            if args.create_db:
                rtype = create_database(c, args.create_db, args.ignore_if_exists)
                entry["create_database"] = {"name": args.create_db, "response_type": rtype,
                                            "result": "SUCCESS" if rtype == 0 else str(rtype)}
            report["coordinator"] = entry
        finally:
            c.close()
    for t in args.tablet or []:
        c = Conn(t, args.timeout)
        try:
            av = api_versions(c)
            if av["server_type"] != 2 and not args.any_server_type:
                raise ProbeError(f"{c.addr}: server_type {av['server_type']} is not a tablet server (2)")
            report.setdefault("tablet_servers", []).append(
                {"addr": c.addr, "server_type": av["server_type_name"], "api_keys": len(av["api_versions"]),
                 "api_versions": {str(k): list(v) for k, v in sorted(av["api_versions"].items())}})
        finally:
            c.close()
    return report


def summarize(report: dict) -> str:
    lines = []
    if "zookeeper" in report:
        lines.append(f"zookeeper {report['zookeeper']['addr']}: {report['zookeeper']['ruok']}")
    co = report.get("coordinator")
    if co:
        md = co["metadata"]
        ts = ", ".join(f"id={t['node_id']}@{t['host']}:{t['port']}" for t in md["tablet_servers"])
        lines.append(f"coordinator {co['addr']}: ApiVersions OK ({co['server_type']}, {co['api_keys']} api keys); "
                     f"GetMetadata OK: tablet servers [{ts}]")
        if "create_database" in co:
            cd = co["create_database"]
            lines.append(f"coordinator {co['addr']}: CreateDatabase {cd['name']!r} -> {cd['result']}")
    for t in report.get("tablet_servers", []):
        lines.append(f"tablet server {t['addr']}: ApiVersions OK ({t['server_type']}, {t['api_keys']} api keys)")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bootstrap", "-b", help="coordinator HOST:PORT")
    p.add_argument("--tablet", "-t", action="append", help="tablet server HOST:PORT (repeatable)")
    p.add_argument("--zk", help="ZooKeeper HOST:PORT ('ruok' check)")
    p.add_argument("--min-tablets", type=int, default=1, help="tablet servers that must be registered (1)")
    p.add_argument("--create-db", metavar="NAME", help="send CreateDatabase NAME to the coordinator")
    p.add_argument("--ignore-if-exists", action="store_true", help="CreateDatabase ignore_if_exists=true")
    p.add_argument("--any-server-type", action="store_true", help="do not check server_type")
    p.add_argument("--timeout", type=float, default=5.0, help="socket timeout per attempt, seconds (5)")
    p.add_argument("--wait", type=float, default=0.0, help="retry until ready for up to N seconds (0 = once)")
    p.add_argument("--interval", type=float, default=0.5, help="seconds between retries (0.5)")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p.add_argument("--leaders", metavar="DB.TABLE", help="print the leader and replicas of every bucket of a table")
    args = p.parse_args(argv)
    if args.leaders:
        if not args.bootstrap:
            p.error("--leaders needs --bootstrap")
        conn = Conn(args.bootstrap, args.timeout)
        try:
            rows = table_leaders(conn, args.leaders)
        except (OSError, ProbeError) as e:
            print(f"fluss_probe: {e}", file=sys.stderr)
            return 1
        finally:
            conn.close()
        if not rows:
            print(f"fluss_probe: no buckets for {args.leaders} (does the table exist?)", file=sys.stderr)
            return 1
        for bucket, leader, replicas in rows:
            print(f"bucket {bucket}: leader {'none' if leader is None else leader}, replicas {replicas}")
        return 0
    for a in [args.bootstrap, args.zk] + (args.tablet or []):
        if a:
            parse_addr(a)
    if not (args.bootstrap or args.tablet or args.zk):
        p.error("nothing to probe: give --bootstrap, --tablet and/or --zk")
    if args.create_db and not args.bootstrap:
        p.error("--create-db needs --bootstrap")

    deadline = time.monotonic() + args.wait
    attempt = 0
    while True:
        attempt += 1
        try:
            report = run_checks(args)
            break
        except (OSError, ProbeError) as e:
            last = f"{type(e).__name__}: {e}" if not isinstance(e, ProbeError) else str(e)
            if time.monotonic() + args.interval > deadline:
                print(f"fluss_probe: NOT READY after {attempt} attempt(s): {last}", file=sys.stderr)
                return 1
            time.sleep(args.interval)
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    elif not args.quiet:
        print(summarize(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
