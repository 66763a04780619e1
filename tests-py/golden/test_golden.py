"""The Python runner of the golden scenarios (``golden/*.json``, format in ``golden/README.md``).

One pytest test per file (``parametrize`` over ``sorted(golden/*.json)``, id = file stem): a new
file is picked up with no code change. The Rust runner ``rust/core/tests/golden.rs`` is the
reference; this runner checks exactly the same things with the Python API on the embedded
engine, except recomputing each stated bucket with the core's bucketing (the Python API does not
expose bucketing): like the C++ runner, it asserts every accepted op's stated bucket against its
completion's bucket. Anything it does not understand (unknown field, op, type, value form, code
name) fails the test; nothing is ever skipped, and a file marked ``known_bug`` fails either way.

Error code names: client codes through the binding's ``fluss_writer.CLIENT_CODES``; server codes
through ``fluss_writer.SERVER_CODES`` (the core's ``FlussCode::name`` table).

With FLUSS_BOOTSTRAP_SERVERS set, every file that injects no faults also runs against that real
Fluss cluster as ``cluster/<stem>`` (fresh table, read-back through ``Table.scan`` /
``Table.lookup``); exclusions would be listed, with reasons, in ``CLUSTER_EXCLUDED`` (none now).

At the end of the file: self-tests that feed deliberately broken scenarios to the runner and
assert that it fails with the expected message.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import pathlib
import re
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import fluss_writer as fw
import pyarrow as pa
import pytest
from cluster.support import create_table
from fluss_writer import testing

GOLDEN_DIR = pathlib.Path(__file__).resolve().parents[2].joinpath("golden")
FILES = sorted(GOLDEN_DIR.glob("*.json"))

TABLE = "fluss.golden"
GATE_TIMEOUT_S = 30.0


class GoldenError(Exception):
    """A scenario failed (or could not be understood)."""


# ============================================================================ error code names

_CLIENT_CODES: dict[str, int] = {name: code for name, code, _retriable, _cls in fw.CLIENT_CODES}
# Server code names -> codes, as the core names them (``FlussCode::name``).
_server_cache: dict[str, int] = {name: code for name, code, _retriable in fw.SERVER_CODES}


def _server_codes() -> dict[str, int]:
    return _server_cache


def code_of(name: str) -> int:
    if name in _CLIENT_CODES:
        return _CLIENT_CODES[name]
    if name != "SERVER_ERROR":
        code = _server_codes().get(name)
        if code is not None:
            return code
    raise GoldenError(f"unknown error code name {name!r}")


def code_name(code: int) -> str:
    if code == 0:
        return "OK"
    for n, c in _CLIENT_CODES.items():
        if c == code:
            return n
    for n, c in _server_cache.items():
        if c == code:
            return f"{n} ({code})"
    return f"SERVER_ERROR ({code})"


# ============================================================================ strict parsing


def _is_uint(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


class Obj:
    """A JSON object whose every key must be consumed: leftover keys are an error."""

    def __init__(self, v: Any, what: str) -> None:
        if not isinstance(v, dict):
            raise GoldenError(f"{what}: expected an object, got {json.dumps(v)}")
        self.map: dict[str, Any] = v
        self.used: set[str] = set()
        self.what = what

    def opt(self, k: str) -> Any:
        self.used.add(k)
        return self.map.get(k)

    def req(self, k: str) -> Any:
        v = self.opt(k)
        if v is None:
            raise GoldenError(f"{self.what}: missing field {k!r}")
        return v

    def str(self, k: str) -> str:
        v = self.req(k)
        if not isinstance(v, str):
            raise GoldenError(f"{self.what}: {k!r} must be a string, got {json.dumps(v)}")
        return v

    def opt_str(self, k: str) -> Optional[str]:
        return None if self.opt(k) is None else self.str(k)

    def opt_u64(self, k: str) -> Optional[int]:
        v = self.opt(k)
        if v is None:
            return None
        if not _is_uint(v):
            raise GoldenError(f"{self.what}: {k!r} must be a non-negative integer, got {json.dumps(v)}")
        return v

    def u64(self, k: str) -> int:
        v = self.opt_u64(k)
        if v is None:
            raise GoldenError(f"{self.what}: missing field {k!r}")
        return v

    def opt_bool(self, k: str) -> Optional[bool]:
        v = self.opt(k)
        if v is not None and not isinstance(v, bool):
            raise GoldenError(f"{self.what}: {k!r} must be true or false, got {json.dumps(v)}")
        return v

    def opt_arr(self, k: str) -> Optional[list[Any]]:
        v = self.opt(k)
        if v is not None and not isinstance(v, list):
            raise GoldenError(f"{self.what}: {k!r} must be an array, got {json.dumps(v)}")
        return v

    def arr(self, k: str) -> list[Any]:
        v = self.opt_arr(k)
        if v is None:
            raise GoldenError(f"{self.what}: missing field {k!r}")
        return v

    def strings(self, k: str) -> Optional[list[str]]:
        a = self.opt_arr(k)
        if a is not None and not all(isinstance(x, str) for x in a):
            raise GoldenError(f"{self.what}: {k!r} must hold strings")
        return a

    def done(self) -> None:
        extra = sorted(k for k in self.map if k not in self.used)
        if extra:
            raise GoldenError(f"{self.what}: unknown field(s) {extra} (a runner never skips what it does not understand)")


@dataclass
class Column:
    name: str
    type: str
    nullable: bool


@dataclass
class TableSpec:
    kind: str  # "log" | "pk"
    bucket_count: int
    columns: list[Column]
    primary_key: list[str]
    bucket_key: list[str]


@dataclass
class WriterSpec:
    name: str
    upsert: bool
    partial_update: Optional[list[str]]
    max_pending_callbacks: Optional[int]
    sharded: Optional[int]  # None = the connection's FIFO worker


@dataclass
class FaultSpec:
    kind: str  # "error" | "delay" | "drop_connection"
    bucket: int
    times: int
    code: int = 0
    message: str = ""
    ms: int = 0
    after_apply: bool = False


class OpExpect:
    """``ok`` | ``callback_error`` code | ``sync_error`` code | ``any_of`` [...]."""

    def __init__(self, kind: str, code: int = 0, alts: Optional[list[OpExpect]] = None) -> None:
        self.kind = kind
        self.code = code
        self.alts = alts or []

    def branches(self) -> list[OpExpect]:
        if self.kind == "any_of":
            return [b for a in self.alts for b in a.branches()]
        return [self]

    def allows_sync(self, code: int) -> bool:
        return any(b.kind == "sync_error" and b.code == code for b in self.branches())

    def allows_accept(self) -> bool:
        return any(b.kind != "sync_error" for b in self.branches())

    def allows_outcome(self, code: int) -> bool:
        return any(
            (b.kind == "ok" and code == 0) or (b.kind == "callback_error" and b.code == code) for b in self.branches()
        )

    def __str__(self) -> str:
        if self.kind == "ok":
            return "ok"
        if self.kind == "any_of":
            return "any_of [" + ", ".join(str(a) for a in self.alts) + "]"
        return f"{self.kind} {code_name(self.code)}"


@dataclass
class Timing:
    min_ms: Optional[int] = None
    max_ms: Optional[int] = None

    @staticmethod
    def parse(o: Obj) -> Timing:
        return Timing(o.opt_u64("min_elapsed_ms"), o.opt_u64("max_elapsed_ms"))

    def check(self, what: str, elapsed_s: float) -> None:
        ms = elapsed_s * 1000.0
        if self.min_ms is not None and ms < self.min_ms:
            raise GoldenError(f"{what} took {ms:.1f} ms, expected at least {self.min_ms} ms")
        if self.max_ms is not None and ms > self.max_ms:
            raise GoldenError(f"{what} took {ms:.1f} ms, expected at most {self.max_ms} ms")


@dataclass
class CbSpec:
    sleep_ms: int = 0
    gate: Optional[str] = None
    raise_: bool = False
    call: Optional[Step] = None


@dataclass
class Step:
    op: str
    # write ops
    id: str = ""
    writer: str = ""
    row: Optional[list[Any]] = None  # append / upsert row, delete key
    rows: Optional[list[list[Any]]] = None  # append_arrow
    buckets: list[int] = field(default_factory=list)
    notify: str = "callback"  # "callback" | "result" | "detached"
    callback: CbSpec = field(default_factory=CbSpec)
    expect: Optional[OpExpect] = None
    offset: Optional[int] = None
    bucket_results: Optional[list[tuple[int, int, Optional[int]]]] = None
    # flush / close / wait: None = ok, else the expected error code
    call_error: Optional[int] = None
    timeout_ms: Optional[int] = None
    timing: Timing = field(default_factory=Timing)
    target: str = ""
    ms: int = 0
    gate: str = ""
    state: str = ""
    faults: list[FaultSpec] = field(default_factory=list)
    threads: list[tuple[str, list[Step]]] = field(default_factory=list)

    @property
    def is_write(self) -> bool:
        return self.op in ("append", "upsert", "delete", "append_arrow")


@dataclass
class Scenario:
    table: TableSpec
    config: dict[str, str]
    faults: list[FaultSpec]
    writers: list[WriterSpec]
    steps: list[Step]
    callback_order: list[list[str]]
    callback_errors: dict[str, int]
    read_back_buckets: Optional[dict[int, list[list[Any]]]]
    read_back_lookups: Optional[list[tuple[list[Any], Optional[list[Any]]]]]
    settle_ms: int
    known_bug: Optional[str]


TYPES = ("INT", "BIGINT", "STRING", "DOUBLE", "BOOLEAN")


def parse_value(v: Any, col: Column, nullable: bool, what: str) -> Any:
    bad = GoldenError(f"{what}: value {json.dumps(v)} does not fit {col.type}")
    if v is None:
        if nullable:
            return None
        raise GoldenError(f"{what}: null in a NOT NULL column")
    if isinstance(v, dict):
        o = Obj(v, f"{what}: repeat value")
        s = o.str("repeat")
        n = o.u64("count")
        o.done()
        if col.type != "STRING":
            raise bad
        return s * n
    if col.type == "INT":
        if isinstance(v, int) and not isinstance(v, bool) and -(2**31) <= v < 2**31:
            return v
    elif col.type == "BIGINT":
        if isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63:
            return v
    elif col.type == "DOUBLE":
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    elif col.type == "BOOLEAN":
        if isinstance(v, bool):
            return v
    elif col.type == "STRING":
        if isinstance(v, str):
            return v
    raise bad


def parse_row(v: Any, table: TableSpec, what: str) -> list[Any]:
    if not isinstance(v, list):
        raise GoldenError(f"{what}: a row must be an array")
    if len(v) != len(table.columns):
        raise GoldenError(f"{what}: the row has {len(v)} values, the table {len(table.columns)} columns")
    return [parse_value(x, c, c.nullable, what) for x, c in zip(v, table.columns)]


def parse_key(v: Any, table: TableSpec, what: str) -> list[Any]:
    if not isinstance(v, list):
        raise GoldenError(f"{what}: a key must be an array")
    pk = [next(c for c in table.columns if c.name == n) for n in table.primary_key]
    if len(v) != len(pk):
        raise GoldenError(f"{what}: the key has {len(v)} values, the primary key {len(pk)} columns")
    return [parse_value(x, c, False, what) for x, c in zip(v, pk)]


def parse_code(v: Any, what: str) -> int:
    if not isinstance(v, str):
        raise GoldenError(f"{what}: an error code must be a name string, got {json.dumps(v)}")
    return code_of(v)


def parse_op_expect(v: Any, what: str) -> OpExpect:
    if v == "ok":
        return OpExpect("ok")
    o = Obj(v, f"{what}: expect")
    c = o.opt("callback_error")
    if c is not None:
        r = OpExpect("callback_error", parse_code(c, what))
    elif o.opt("sync_error") is not None:
        r = OpExpect("sync_error", parse_code(o.opt("sync_error"), what))
    elif o.opt_arr("any_of") is not None:
        r = OpExpect("any_of", alts=[parse_op_expect(x, what) for x in o.arr("any_of")])
    else:
        raise GoldenError(
            f'{what}: expect must be "ok", {{"callback_error"}}, {{"sync_error"}} or {{"any_of"}}, got {json.dumps(v)}'
        )
    o.done()
    return r


def parse_call_expect(v: Any, what: str) -> Optional[int]:
    if v is None:
        raise GoldenError(f'{what}: missing field "expect"')
    if v == "ok":
        return None
    o = Obj(v, f"{what}: expect")
    c = parse_code(o.req("error"), what)
    o.done()
    return c


def parse_state(s: str) -> str:
    states = {"not_started": "not_started", "running": "running", "returned": "returned", "started": "running"}
    if s not in states:
        raise GoldenError(f"unknown callback state {s!r}")
    return states[s]


class Ctx:
    def __init__(self, table: TableSpec, writers: dict[str, bool]) -> None:
        self.table = table
        self.writers = writers
        self.default_writer = next(iter(writers)) if len(writers) == 1 else None
        self.ids: set[str] = set()

    def writer(self, o: Obj) -> str:
        w = o.opt_str("writer")
        if w is not None:
            if w not in self.writers:
                raise GoldenError(f"{o.what}: unknown writer {w!r}")
            return w
        if self.default_writer is None:
            raise GoldenError(f'{o.what}: "writer" is required with several writers')
        return self.default_writer

    def new_id(self, id_: str, what: str) -> str:
        if id_ in self.ids:
            raise GoldenError(f"{what}: duplicate id {id_!r}")
        self.ids.add(id_)
        return id_


def parse_callback(v: Any, ctx: Ctx, what: str, nested: bool) -> CbSpec:
    if v is None or v == "normal":
        return CbSpec()
    o = Obj(v, f"{what}: callback")
    cb = CbSpec(sleep_ms=o.opt_u64("sleep_ms") or 0, gate=o.opt_str("gate"), raise_=bool(o.opt_bool("raise")))
    c = o.opt("call")
    if c is not None:
        if nested:
            raise GoldenError(f"{what}: a callback inside a callback's call cannot make calls of its own")
        step = parse_step(c, ctx, f"{what}: call", True)
        if not (step.is_write or step.op in ("flush", "close", "wait")):
            raise GoldenError(f"{what}: a callback can call flush, close, wait or a write op only")
        cb.call = step
    o.done()
    return cb


def parse_faults(v: list[Any], what: str) -> list[FaultSpec]:
    out = []
    for i, f in enumerate(v):
        w = f"{what}[{i}]"
        o = Obj(f, w)
        bucket = o.u64("bucket")
        times = o.u64("times")
        kind = o.str("fault")
        if kind == "error":
            msg = o.opt_str("message")
            spec = FaultSpec("error", bucket, times, code=parse_code(o.req("code"), w),
                             message="injected by a golden scenario" if msg is None else msg)
        elif kind == "delay":
            spec = FaultSpec("delay", bucket, times, ms=o.u64("ms"))
        elif kind == "drop_connection":
            after = o.opt_bool("after_apply")
            if after is None:
                raise GoldenError(f'{w}: missing field "after_apply"')
            spec = FaultSpec("drop_connection", bucket, times, after_apply=after)
        else:
            raise GoldenError(f"{w}: unknown fault {kind!r}")
        o.done()
        out.append(spec)
    return out


def parse_step(v: Any, ctx: Ctx, what: str, in_callback: bool) -> Step:
    o = Obj(v, what)
    op = o.str("op")
    id_ = v.get("id")
    what = f"{what} ({op} {id_})" if isinstance(id_, str) else f"{what} ({op})"
    o.what = what
    if op in ("append", "upsert", "delete", "append_arrow"):
        s = Step(op, id=ctx.new_id(o.str("id"), what), writer=ctx.writer(o))
        if op in ("append", "upsert"):
            s.row = parse_row(o.req("row"), ctx.table, what)
            s.buckets = [o.u64("bucket")]
        elif op == "delete":
            s.row = parse_key(o.req("key"), ctx.table, what)
            s.buckets = [o.u64("bucket")]
        else:
            s.rows = [parse_row(r, ctx.table, what) for r in o.arr("rows")]
            bs = o.arr("buckets")
            if not all(_is_uint(b) for b in bs):
                raise GoldenError(f"{what}: buckets must be integers")
            if len(bs) != len(s.rows):
                raise GoldenError(f"{what}: {len(s.rows)} rows but {len(bs)} buckets")
            s.buckets = list(bs)
        notify = o.opt_str("notify")
        if notify not in (None, "callback", "result", "detached"):
            raise GoldenError(f"{what}: unknown notify {notify!r}")
        s.notify = notify or "callback"
        s.callback = parse_callback(o.opt("callback"), ctx, what, in_callback)
        cb = s.callback
        if s.notify != "callback" and (cb.call is not None or cb.gate is not None or cb.raise_ or cb.sleep_ms > 0):
            raise GoldenError(f'{what}: "callback" needs notify = callback')
        s.expect = parse_op_expect(o.req("expect"), what)
        off = o.opt("offset")
        if off is not None:
            if not isinstance(off, int) or isinstance(off, bool):
                raise GoldenError(f"{what}: offset must be an integer")
            s.offset = off
        brs = o.opt_arr("bucket_results")
        if brs is not None:
            if op != "append_arrow":
                raise GoldenError(f"{what}: bucket_results only for append_arrow")
            s.bucket_results = []
            for i, x in enumerate(brs):
                bo = Obj(x, f"{what}: bucket_results[{i}]")
                b = bo.u64("bucket")
                n = bo.u64("rows")
                e = bo.opt("error")
                bo.done()
                s.bucket_results.append((b, n, None if e is None else parse_code(e, what)))
        s.timing = Timing.parse(o)
    elif op in ("flush", "close"):
        s = Step(op, writer=ctx.writer(o), timeout_ms=o.opt_u64("timeout_ms"))
        s.call_error = parse_call_expect(o.opt("expect"), what)
        s.timing = Timing.parse(o)
    elif op == "wait":
        s = Step(op, target=o.str("target"), timeout_ms=o.opt_u64("timeout_ms"))
        s.call_error = parse_call_expect(o.opt("expect"), what)
        s.timing = Timing.parse(o)
    elif in_callback:
        raise GoldenError(f"{what}: op {op!r} cannot be called from a callback")
    elif op == "add_callback":
        s = Step(op, id=ctx.new_id(o.str("id"), what), target=o.str("target"))
        s.callback = parse_callback(o.opt("callback"), ctx, what, False)
    elif op == "sleep":
        s = Step(op, ms=o.u64("ms"))
    elif op == "open_gate":
        s = Step(op, gate=o.str("gate"))
    elif op == "await_callback":
        s = Step(op, target=o.str("target"), state=parse_state(o.str("state")))
        t = o.opt_u64("timeout_ms")
        s.timeout_ms = 10_000 if t is None else t
    elif op == "assert_callback":
        s = Step(op, target=o.str("target"), state=parse_state(o.str("state")))
    elif op == "inject":
        s = Step(op, faults=parse_faults(o.arr("faults"), what))
    elif op == "parallel":
        threads = o.req("threads")
        if not isinstance(threads, dict):
            raise GoldenError(f"{what}: threads must be an object")
        s = Step(op)
        for name, steps in threads.items():
            if not isinstance(steps, list):
                raise GoldenError(f"{what}: thread {name} must be a list of steps")
            parsed = []
            for i, x in enumerate(steps):
                st = parse_step(x, ctx, f"{what}: thread {name} step {i}", False)
                if st.op == "parallel":
                    raise GoldenError(f"{what}: parallel blocks do not nest")
                parsed.append(st)
            s.threads.append((name, parsed))
        if not s.threads:
            raise GoldenError(f"{what}: no threads")
    else:
        raise GoldenError(f"{what}: unknown op {op!r}")
    o.done()
    return s


def parse_scenario(v: Any) -> Scenario:
    o = Obj(v, "scenario")
    o.str("description")
    known_bug = o.opt_str("known_bug")
    settle = o.opt_u64("settle_timeout_ms")

    t = Obj(o.req("table"), "table")
    kind = t.str("kind")
    if kind not in ("log", "pk"):
        raise GoldenError(f"table: unknown kind {kind!r}")
    bucket_count = t.u64("bucket_count")
    columns = []
    for i, c in enumerate(t.arr("columns")):
        co = Obj(c, f"table.columns[{i}]")
        name = co.str("name")
        ty = co.str("type")
        if ty not in TYPES:
            raise GoldenError(f"unsupported column type {ty!r} (INT, BIGINT, STRING, DOUBLE, BOOLEAN)")
        nullable = co.opt_bool("nullable")
        co.done()
        columns.append(Column(name, ty, True if nullable is None else nullable))
    pk = t.strings("primary_key") or []
    bucket_key = t.strings("bucket_key") or []
    t.done()
    if kind == "log" and pk:
        raise GoldenError("table: a log table has no primary_key")
    if kind == "log" and not bucket_key:
        raise GoldenError("table: a log table needs a bucket_key, so that the bucket of every row is known")
    if kind == "pk" and not pk:
        raise GoldenError("table: a pk table needs a primary_key")
    names = [c.name for c in columns]
    if len(set(names)) != len(names):
        raise GoldenError(f"table: duplicate column names {names}")
    for k in pk + bucket_key:
        if k not in names:
            raise GoldenError(f"table: unknown column {k!r}")
    table = TableSpec(kind, bucket_count, columns, pk, bucket_key or pk)

    config: dict[str, str] = {}
    c = o.opt("config")
    if c is not None:
        if not isinstance(c, dict):
            raise GoldenError("config must be an object")
        for k, val in c.items():
            if k == "bootstrap.servers":
                raise GoldenError("config: bootstrap.servers is set by the runner")
            if not isinstance(val, str):
                raise GoldenError(f"config: {k} must be a string")
            config[k] = val
    fl = o.opt_arr("faults")
    faults = parse_faults(fl, "faults") if fl is not None else []

    writers: list[WriterSpec] = []
    for i, w in enumerate(o.arr("writers")):
        wo = Obj(w, f"writers[{i}]")
        name = wo.str("name")
        wk = wo.str("kind")
        if wk not in ("append", "upsert"):
            raise GoldenError(f"writers[{i}]: unknown kind {wk!r}")
        upsert = wk == "upsert"
        if upsert != (kind == "pk"):
            raise GoldenError(f"writers[{i}]: kind does not fit the table")
        partial = wo.strings("partial_update")
        mpc = wo.opt_u64("max_pending_callbacks")
        e = wo.opt("executor")
        sharded = None
        if e is not None and e != "fifo":
            eo = Obj(e, f"writers[{i}].executor")
            sharded = eo.u64("sharded")
            eo.done()
        wo.done()
        writers.append(WriterSpec(name, upsert, partial, mpc, sharded))
    if not writers:
        raise GoldenError("writers: at least one")
    wmap = {w.name: w.upsert for w in writers}
    if len(wmap) != len(writers):
        raise GoldenError("writers: duplicate names")
    ctx = Ctx(table, wmap)
    steps = [parse_step(s, ctx, f"steps[{i}]", False) for i, s in enumerate(o.arr("steps"))]

    order: list[list[str]] = []
    cb_errors: dict[str, int] = {}
    rb_buckets = None
    rb_lookups = None
    e = o.opt("expect")
    if e is not None:
        eo = Obj(e, "expect")
        for chain in eo.opt_arr("callback_order") or []:
            if not isinstance(chain, list):
                raise GoldenError("expect.callback_order: chains must be arrays of ids")
            for id_ in chain:
                if not isinstance(id_, str):
                    raise GoldenError("expect.callback_order: ids are strings")
                if id_ not in ctx.ids:
                    raise GoldenError(f"expect.callback_order: unknown id {id_!r}")
            order.append(chain)
        m = eo.opt("callback_errors")
        if m is not None:
            if not isinstance(m, dict):
                raise GoldenError("expect.callback_errors must be an object")
            for k, n in m.items():
                if k not in wmap:
                    raise GoldenError(f"expect.callback_errors: unknown writer {k!r}")
                if not _is_uint(n):
                    raise GoldenError("expect.callback_errors: counts are integers")
                cb_errors[k] = n
        rb = eo.opt("read_back")
        if rb is not None:
            ro = Obj(rb, "expect.read_back")
            bm = ro.opt("buckets")
            if bm is not None:
                if kind != "log":
                    raise GoldenError("expect.read_back.buckets is for log tables")
                if not isinstance(bm, dict):
                    raise GoldenError("expect.read_back.buckets must be an object")
                rb_buckets = {}
                for k, rows in bm.items():
                    if not re.fullmatch(r"-?[0-9]+", k):
                        raise GoldenError(f"expect.read_back.buckets: key {k!r} is not a bucket number")
                    if not isinstance(rows, list):
                        raise GoldenError("expect.read_back.buckets: values are lists of rows")
                    rb_buckets[int(k)] = [parse_row(r, table, "expect.read_back") for r in rows]
                if len(rb_buckets) != bucket_count or any(b < 0 or b >= bucket_count for b in rb_buckets):
                    raise GoldenError("expect.read_back.buckets must list every bucket of the table (empty lists allowed)")
            lk = ro.opt_arr("lookups")
            if lk is not None:
                if kind != "pk":
                    raise GoldenError("expect.read_back.lookups is for pk tables")
                rb_lookups = []
                for i, x in enumerate(lk):
                    lo = Obj(x, f"expect.read_back.lookups[{i}]")
                    key = parse_key(lo.req("key"), table, "lookup")
                    lo.used.add("row")
                    if "row" not in x:
                        raise GoldenError(f'expect.read_back.lookups[{i}]: missing field "row" (null for absent)')
                    row = None if x["row"] is None else parse_row(x["row"], table, "lookup")
                    lo.done()
                    rb_lookups.append((key, row))
            ro.done()
        eo.done()
    o.done()
    return Scenario(table, config, faults, writers, steps, order, cb_errors, rb_buckets, rb_lookups,
                    10_000 if settle is None else settle, known_bug)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise GoldenError(f"duplicate JSON key {k!r}")
        out[k] = v
    return out


# ============================================================================ running

ThreadKey = tuple  # (threading.get_ident(), threading.get_native_id()): idents alone get reused


def _thread_key() -> ThreadKey:
    return (threading.get_ident(), threading.get_native_id())


@dataclass
class Invocation:
    seq: int
    thread: ThreadKey
    code: int
    bucket: int
    offset: int
    bucket_results: list[tuple[int, int, Optional[int]]]


def _invocation(c: fw.WriteCompletion, seq: int, thread: ThreadKey) -> Invocation:
    brs = []
    for b in c.bucket_results:
        err = b.error
        brs.append((b.bucket, b.rows, None if err is None else err.code))
    return Invocation(seq, thread, c.error_code, c.bucket, c.offset, brs)


@dataclass
class OpRecord:
    writer: str = ""
    target: Optional[str] = None  # late callbacks: the op they were registered on
    arrow: bool = False
    notify: Optional[str] = None
    accepted: bool = False
    submit_seq: int = 0
    submit_thread: Optional[ThreadKey] = None
    invocations: list[Invocation] = field(default_factory=list)
    started: bool = False
    returned: bool = False
    result: Optional[fw.WriteResult] = None


class State:
    def __init__(self, sc: Scenario, engine: Any, table: Optional[fw.Table] = None) -> None:
        self.sc = sc
        self.table = sc.table
        # The embedded engine (fault injection, read-back), or None against a real cluster,
        # where ``handle`` (``Table.scan`` / ``Table.lookup``) reads back.
        self.engine = engine
        self.handle = table
        self.lock = threading.Lock()
        self.writers: dict[str, Any] = {}
        self.writer_upsert = {w.name: w.upsert for w in sc.writers}
        self.fifo_writers = {w.name for w in sc.writers if w.sharded is None}
        self.ops: dict[str, OpRecord] = {}
        self.cb_seq = itertools.count()
        self.submit_seq = itertools.count()
        self.gates: dict[str, threading.Event] = {}
        self.failures: list[str] = []
        self.submit_threads: set[ThreadKey] = {_thread_key()}
        self.cb_errors: dict[str, int] = {w.name: 0 for w in sc.writers}
        self.arrow_schema = pa.schema(
            [pa.field(c.name, ARROW_TYPES[c.type], nullable=c.nullable) for c in sc.table.columns]
        )

    def fail(self, msg: str) -> None:
        with self.lock:
            self.failures.append(msg)

    def gate(self, name: str) -> threading.Event:
        with self.lock:
            return self.gates.setdefault(name, threading.Event())

    def open_all_gates(self) -> None:
        with self.lock:
            gates = list(self.gates.values())
        for g in gates:
            g.set()

    def cb_state(self, id_: str) -> str:
        with self.lock:
            r = self.ops.get(id_)
            if r is None:
                raise GoldenError(f"unknown op {id_!r}")
            return "returned" if r.returned else "running" if r.started else "not_started"

    def inject(self, faults: list[FaultSpec]) -> None:
        if faults and self.engine is None:
            raise GoldenError("this scenario injects faults, which only the embedded engine can do")
        for f in faults:
            if f.kind == "error":
                self.engine.inject_error(TABLE, f.bucket, f.code, f.message, f.times)
            elif f.kind == "delay":
                self.engine.inject_delay(TABLE, f.bucket, f.ms / 1000.0, f.times)
            else:
                self.engine.inject_drop_connection(TABLE, f.bucket, f.after_apply, f.times)

    def error_handler(self, writer: str) -> Callable[[BaseException, str], None]:
        def on_callback_error(_exc: BaseException, _operation: str) -> None:
            with self.lock:
                self.cb_errors[writer] += 1

        return on_callback_error


ARROW_TYPES = {"INT": pa.int32(), "BIGINT": pa.int64(), "STRING": pa.utf8(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_()}


class GoldenCallback:
    """The callable handed to the binding (an object, so that a weakref can prove it destroyed)."""

    def __init__(self, state: State, id_: str, spec: CbSpec) -> None:
        self.state = state
        self.id = id_
        self.spec = spec

    def __call__(self, c: fw.WriteCompletion) -> None:
        st = self.state
        thread = _thread_key()
        with st.lock:
            seq = next(st.cb_seq)
        try:
            inv: Optional[Invocation] = _invocation(c, seq, thread)
        except Exception as e:  # noqa: BLE001 - a broken completion is a failure, not a raise
            st.fail(f"callback of {self.id}: cannot read the completion: {e!r}")
            inv = None
        with st.lock:
            r = st.ops[self.id]
            if inv is not None:
                r.invocations.append(inv)
            r.started = True
        try:
            if self.spec.sleep_ms > 0:
                time.sleep(self.spec.sleep_ms / 1000.0)
            if self.spec.gate is not None and not st.gate(self.spec.gate).wait(GATE_TIMEOUT_S):
                st.fail(f"callback of {self.id}: gate {self.spec.gate!r} never opened")
            if self.spec.call is not None:
                try:
                    run_step(st, self.spec.call, f"call inside the callback of {self.id}")
                except GoldenError as e:
                    st.fail(str(e))
                except Exception as e:  # noqa: BLE001
                    st.fail(f"call inside the callback of {self.id}: unexpected {e!r}")
            if self.spec.raise_:
                raise RuntimeError(f"golden: the callback of {self.id} raises on purpose")
        finally:
            with st.lock:
                st.ops[self.id].returned = True


def _to_arrow(state: State, rows: list[list[Any]]) -> pa.RecordBatch:
    cols = [pa.array([r[i] for r in rows], type=ARROW_TYPES[c.type]) for i, c in enumerate(state.table.columns)]
    return pa.RecordBatch.from_arrays(cols, schema=state.arrow_schema)


def _secs(ms: Optional[int]) -> Optional[float]:
    return None if ms is None else ms / 1000.0


def submit(state: State, op: Step, what: str) -> None:
    what = f"{what} {op.id}"
    assert op.expect is not None
    upsert = state.writer_upsert[op.writer]
    if (op.op in ("upsert", "delete")) != upsert:
        raise GoldenError(f"{what}: this op does not fit writer {op.writer!r}")
    with state.lock:
        r = state.ops.setdefault(op.id, OpRecord())
        r.writer = op.writer
        r.arrow = op.op == "append_arrow"
        r.notify = op.notify
    w = state.writers[op.writer]
    fn = {"append": "append", "upsert": "upsert", "delete": "delete", "append_arrow": "write_arrow_batch"}[op.op]
    arg = _to_arrow(state, op.rows or []) if op.op == "append_arrow" else op.row
    cb: Optional[GoldenCallback] = None
    cb_ref = None
    result = None
    error: Optional[BaseException] = None
    t0 = time.monotonic()
    try:
        if op.notify == "callback":
            cb = GoldenCallback(state, op.id, op.callback)
            cb_ref = weakref.ref(cb)
            getattr(w, fn)(arg, callback=cb)
        elif op.notify == "result":
            result = getattr(w, fn)(arg)
            if not isinstance(result, fw.WriteResult):
                raise GoldenError(f"{what}: {fn}() without a callback returned {result!r}, not a WriteResult")
        elif hasattr(w, fn + "_detached"):
            getattr(w, fn + "_detached")(arg)
        else:
            # No detached form in the Python API for this op: submit and drop the WriteResult.
            getattr(w, fn)(arg)
    except fw.FlussWriterError as e:
        error = e
    elapsed = time.monotonic() - t0
    cb = None  # drop this frame's reference: only the binding may still hold the callable
    if error is None:
        with state.lock:
            r = state.ops[op.id]
            r.accepted = True
            r.submit_seq = next(state.submit_seq)
            r.submit_thread = _thread_key()
            r.result = result
        if not op.expect.allows_accept():
            raise GoldenError(f"{what}: expected {op.expect}, but the submission was accepted")
    else:
        code = getattr(error, "code", None)
        if cb_ref is not None and cb_ref() is not None:
            raise GoldenError(
                f"{what}: rejected synchronously ({error!r}) but its callback was not destroyed before the call returned"
            )
        if not isinstance(code, int) or not op.expect.allows_sync(code):
            raise GoldenError(f"{what}: expected {op.expect}, got a synchronous error {code_name(code or 0)}: {error}")
    op.timing.check(what, elapsed)


def call_result(what: str, fn: Callable[[], Any], expect: Optional[int], timing: Timing) -> bool:
    """Run a flush/close/wait; check its outcome against ``expect`` (None = ok). True when ok."""
    t0 = time.monotonic()
    got: Optional[int] = None
    detail = "ok"
    try:
        fn()
    except fw.FlussWriterError as e:
        got = e.code
        detail = f"{code_name(e.code)}: {e}"
    elapsed = time.monotonic() - t0
    if got != expect:
        want = "ok" if expect is None else code_name(expect)
        raise GoldenError(f"{what}: expected {want}, got {detail}")
    timing.check(what, elapsed)
    return got is None


def accepted_ops(state: State, writer: str) -> list[str]:
    with state.lock:
        return [k for k, r in state.ops.items() if r.accepted and r.target is None and r.writer == writer]


def check_watermark(state: State, what: str, before: list[str]) -> None:
    """C6: after a successful flush/close, every op accepted before it completed and returned."""
    with state.lock:
        for id_ in before:
            r = state.ops[id_]
            if r.notify == "callback":
                done = r.returned
            elif r.notify == "result":
                done = r.result is not None and r.result.done()
            else:
                done = True
            if not done:
                raise GoldenError(f"{what} returned ok, but {id_} (accepted before it) had not completed and returned")


def run_step(state: State, step: Step, what: str) -> None:
    op = step.op
    if step.is_write:
        submit(state, step, what)
    elif op in ("flush", "close"):
        w = state.writers[step.writer]
        before = accepted_ops(state, step.writer)
        fn = w.flush if op == "flush" else w.close
        label = f"{what} {op} {step.writer}"
        if call_result(label, lambda: fn(_secs(step.timeout_ms)), step.call_error, step.timing):
            check_watermark(state, label, before)
    elif op == "wait":
        with state.lock:
            r = state.ops.get(step.target)
            result = r.result if r is not None else None
        if result is None:
            raise GoldenError(f"{what}: wait on {step.target!r}, which is not an accepted notify=result op")

        def wait() -> None:
            c = result.wait(_secs(step.timeout_ms))
            if not isinstance(c, fw.WriteCompletion):
                raise GoldenError(f"{what}: wait returned {c!r}, not a WriteCompletion")

        call_result(f"{what} wait {step.target}", wait, step.call_error, step.timing)
    elif op == "add_callback":
        with state.lock:
            t = state.ops.get(step.target)
            result = t.result if t is not None else None
            if result is None or t is None:
                raise GoldenError(f"{what}: add_callback on {step.target!r}, which is not an accepted notify=result op")
            r = state.ops.setdefault(step.id, OpRecord())
            r.writer = t.writer
            r.target = step.target
            r.notify = "callback"
            r.accepted = True
            r.submit_seq = next(state.submit_seq)
            r.submit_thread = _thread_key()
        result.add_callback(GoldenCallback(state, step.id, step.callback))
    elif op == "sleep":
        time.sleep(step.ms / 1000.0)
    elif op == "open_gate":
        state.gate(step.gate).set()
    elif op == "await_callback":
        assert step.timeout_ms is not None
        deadline = time.monotonic() + step.timeout_ms / 1000.0
        while True:
            s = state.cb_state(step.target)
            if (s != "not_started") if step.state == "running" else (s == step.state):
                return
            if time.monotonic() >= deadline:
                raise GoldenError(
                    f"{what}: the callback of {step.target} did not reach {step.state} within {step.timeout_ms} ms (it is {s})"
                )
            time.sleep(0.001)
    elif op == "assert_callback":
        s = state.cb_state(step.target)
        if s != step.state:
            raise GoldenError(f"{what}: the callback of {step.target} is {s}, expected {step.state}")
    elif op == "inject":
        state.inject(step.faults)
    elif op == "parallel":
        run_parallel(state, step, what)
    else:
        raise GoldenError(f"{what}: unknown op {op!r}")


def run_parallel(state: State, step: Step, what: str) -> None:
    barrier = threading.Barrier(len(step.threads))
    errors: list[str] = []

    def body(name: str, steps: list[Step]) -> None:
        w = f"{what} thread {name}"
        try:
            with state.lock:
                state.submit_threads.add(_thread_key())
            barrier.wait(30)
            for i, s in enumerate(steps):
                run_step(state, s, f"{w} step {i}")
        except GoldenError as e:
            errors.append(str(e))
        except BaseException as e:  # noqa: BLE001 - any failure in a thread fails the scenario
            errors.append(f"{w}: unexpected {e!r}")

    threads = [threading.Thread(target=body, args=(n, s), name=f"golden-{n}") for n, s in step.threads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise GoldenError("\n".join(errors))


def settle(state: State, ms: int) -> None:
    """Wait until every accepted callback ran and returned, and every result completed."""
    deadline = time.monotonic() + ms / 1000.0
    while True:
        with state.lock:
            pending = sorted(
                k
                for k, r in state.ops.items()
                if r.accepted
                and (
                    (r.notify == "callback" and not r.returned)
                    or (r.notify == "result" and not (r.result is not None and r.result.done()))
                )
            )
        if not pending:
            return
        if time.monotonic() >= deadline:
            raise GoldenError(f"after the last step, these never completed within {ms} ms: {pending}")
        time.sleep(0.002)


def all_write_ops(steps: list[Step], out: list[Step]) -> None:
    for s in steps:
        if s.is_write or s.op == "add_callback":
            if s.is_write:
                out.append(s)
            if s.callback.call is not None:
                all_write_ops([s.callback.call], out)
        elif s.op == "parallel":
            for _, ts in s.threads:
                all_write_ops(ts, out)


def _short(v: Any) -> str:
    if isinstance(v, str) and len(v) > 12:
        return f"{v[:8]!r}..({len(v)} chars)"
    return "null" if v is None else repr(v)


def show_rows(rows: list[Any]) -> str:
    return "[" + " ".join("[" + ",".join(_short(x) for x in r) + "]" for r in rows) + "]"


def check(state: State) -> list[str]:
    sc = state.sc
    errs: list[str] = []
    specs: list[Step] = []
    all_write_ops(sc.steps, specs)
    with state.lock:
        ops = dict(state.ops)
        submitters = set(state.submit_threads)
        cb_errors = dict(state.cb_errors)
    me = _thread_key()

    # Per op: outcome, bucket, offset, bucket results, exactly once, where.
    for spec in specs:
        id_ = spec.id
        r = ops.get(id_)
        if r is None:
            errs.append(f"{id_}: never submitted (a step before it failed?)")
            continue
        if not r.accepted:
            continue  # sync errors were checked at submission
        c: Optional[Invocation] = None
        if r.notify == "callback":
            if len(r.invocations) != 1:
                errs.append(f"{id_}: callback ran {len(r.invocations)} times, expected exactly once")
                continue
            c = r.invocations[0]
        elif r.notify == "result" and r.result is not None:
            got = r.result.try_get()
            c = None if got is None else _invocation(got, 0, me)
        if c is None:
            continue
        assert spec.expect is not None
        if not spec.expect.allows_outcome(c.code):
            errs.append(f"{id_}: completed with {code_name(c.code)}, expected {spec.expect}")
        if c.bucket != spec.buckets[0]:
            errs.append(f"{id_}: completion bucket {c.bucket} but the file says {spec.buckets[0]}")
        if spec.offset is not None and c.offset != spec.offset:
            errs.append(f"{id_}: offset {c.offset} expected {spec.offset}")
        if spec.op == "append_arrow":
            want: dict[int, int] = {}
            for b in spec.buckets:
                want[b] = want.get(b, 0) + 1
            got_rows = {b: n for b, n, _ in c.bucket_results}
            if want != got_rows:
                errs.append(f"{id_}: bucket_results rows per bucket {got_rows}, the file's buckets give {want}")
            if spec.bucket_results is not None:
                want_br = sorted(spec.bucket_results, key=lambda x: (x[0], x[1], -2**40 if x[2] is None else x[2]))
                if c.bucket_results != want_br:
                    errs.append(f"{id_}: bucket_results {c.bucket_results}, expected {want_br}")
        if r.notify == "callback" and c.thread in submitters:
            errs.append(f"{id_}: callback ran on a submitting thread (C2)")

    # Late callbacks: exactly once, the target's outcome, never on a submitting thread.
    for id_, r in ops.items():
        if r.target is None:
            continue
        if len(r.invocations) != 1:
            errs.append(f"{id_} (late callback on {r.target}): ran {len(r.invocations)} times, expected once")
            continue
        tr = ops[r.target].result
        tc = tr.try_get() if tr is not None else None
        want_code = None if tc is None else tc.error_code
        if want_code != r.invocations[0].code:
            errs.append(f"{id_}: late callback saw {code_name(r.invocations[0].code)}, its result has {want_code}")
        if r.invocations[0].thread in submitters:
            errs.append(f"{id_}: late callback ran on a submitting thread (C2)")

    # C2: every callback of a fifo writer on the connection's one worker thread.
    fifo_threads = {i.thread for r in ops.values() if r.writer in state.fifo_writers for i in r.invocations}
    if len(fifo_threads) > 1:
        errs.append(f"callbacks of fifo writers ran on {len(fifo_threads)} threads, expected one worker")

    # C3: per (submitting thread, writer, bucket), single-record callbacks in submission order.
    groups: dict[tuple[Any, str, int], list[tuple[int, int, str]]] = {}
    for id_, r in ops.items():
        if r.accepted and r.target is None and not r.arrow and r.notify == "callback" and len(r.invocations) == 1:
            key = (r.submit_thread, r.writer, r.invocations[0].bucket)
            groups.setdefault(key, []).append((r.submit_seq, r.invocations[0].seq, id_))
    for (_, w, b), v in groups.items():
        v.sort()
        for p, q in zip(v, v[1:]):
            if p[1] > q[1]:
                errs.append(f"writer {w} bucket {b}: {p[2]} was submitted before {q[2]} but its callback ran after (C3)")

    # Log tables: per bucket, successful single-record offsets grow in callback order.
    if sc.table.kind == "log":
        per: dict[int, list[tuple[int, int, str]]] = {}
        for id_, r in ops.items():
            if r.target is None and not r.arrow and len(r.invocations) == 1 and r.invocations[0].code == 0:
                inv = r.invocations[0]
                per.setdefault(inv.bucket, []).append((inv.seq, inv.offset, id_))
        for b, v in per.items():
            v.sort()
            for p, q in zip(v, v[1:]):
                if p[1] >= q[1]:
                    errs.append(f"bucket {b}: callback of {p[2]} (offset {p[1]}) ran before {q[2]} (offset {q[1]})")

    # Explicit order chains.
    for chain in sc.callback_order:
        prev: Optional[tuple[int, str]] = None
        for id_ in chain:
            r = ops.get(id_)
            if r is None or not r.invocations:
                errs.append(f"callback_order {chain}: {id_} has no callback invocation")
                break
            seq = r.invocations[0].seq
            if prev is not None and seq <= prev[0]:
                errs.append(f"callback_order {chain}: {id_} ran before {prev[1]}")
            prev = (seq, id_)

    # Callback errors per writer.
    for ws in sc.writers:
        want_n = sc.callback_errors.get(ws.name, 0)
        if cb_errors[ws.name] != want_n:
            errs.append(
                f"writer {ws.name}: {cb_errors[ws.name]} callback errors reported to the error handler, expected {want_n}"
            )

    # Read-back.
    if sc.read_back_buckets is not None:
        for b, want_rows in sorted(sc.read_back_buckets.items()):
            try:
                recs = state.engine.scan(TABLE, b, 0) if state.engine is not None else state.handle.scan(b, 0)
                got_rows = [list(row) for _off, _kind, row in recs]
            except fw.FlussWriterError as e:
                errs.append(f"read-back bucket {b}: {e}")
                continue
            if got_rows != want_rows:
                errs.append(f"read-back bucket {b}:\n  got      {show_rows(got_rows)}\n  expected {show_rows(want_rows)}")
    if sc.read_back_lookups is not None:
        for key, want_row in sc.read_back_lookups:
            try:
                got = state.engine.lookup(TABLE, key) if state.engine is not None else state.handle.lookup(key)
            except fw.FlussWriterError as e:
                errs.append(f"lookup {key}: {e}")
                continue
            got_row = None if got is None else list(got)
            if got_row != want_row:
                errs.append(f"lookup {key}: got {got_row}, expected {want_row}")
    return errs


def run_scenario(sc: Scenario, bootstrap: str = "embedded", stem: str = "") -> None:
    """Run on the embedded engine, or (``bootstrap`` = ``host:port``) against a real cluster
    with a fresh table and read-back through ``Table.scan`` / ``Table.lookup``."""
    cluster = bootstrap != "embedded"
    try:
        conn = fw.connect(bootstrap, sc.config)
    except fw.FlussWriterError as e:
        raise GoldenError(f"{'connect' if cluster else 'config'}: {e}") from None
    path = TABLE
    state: Optional[State] = None
    errors: list[str] = []
    try:
        schema = fw.Schema([(c.name, c.type, c.nullable) for c in sc.table.columns],
                           primary_keys=sc.table.primary_key or None)
        desc = fw.TableDescriptor(schema, bucket_count=sc.table.bucket_count,
                                  bucket_keys=sc.table.bucket_key if sc.table.kind == "log" else None)
        try:
            if cluster:
                conn.admin().create_database(CLUSTER_DB, True)
                path = create_table(conn, lambda: f"{CLUSTER_DB}.t{stem.split('_')[0]}_{uuid.uuid4().hex[:10]}", desc)
            else:
                conn.admin().create_table(path, desc, False)
        except (fw.FlussWriterError, RuntimeError) as e:
            raise GoldenError(f"create table: {e}") from None
        table = conn.get_table(path)
        state = State(sc, None if cluster else testing.engine(conn), table)
        state.inject(sc.faults)
        for ws in sc.writers:
            try:
                if ws.upsert:
                    up = table.new_upsert()
                    if ws.partial_update is not None:
                        up = up.partial_update_by_name(ws.partial_update)
                    factory: Any = up
                else:
                    factory = table.new_append()
                state.writers[ws.name] = factory.create_writer(
                    max_pending_callbacks=ws.max_pending_callbacks,
                    executor=ws.sharded,
                    on_callback_error=state.error_handler(ws.name),
                )
            except fw.FlussWriterError as e:
                raise GoldenError(f"writer {ws.name}: {e}") from None

        for i, s in enumerate(sc.steps):
            try:
                run_step(state, s, f"steps[{i}]")
            except GoldenError as e:
                errors.append(str(e))
                break
        if not errors:
            try:
                settle(state, sc.settle_ms)
            except GoldenError as e:
                errors.append(str(e))
        state.open_all_gates()
        if not errors:
            errors.extend(check(state))
    finally:
        # Tear down: open every gate, close every writer, then the connection.
        if state is not None:
            state.open_all_gates()
            for w in state.writers.values():
                try:
                    w.close(10)
                except fw.FlussWriterError:
                    pass
        try:
            conn.close(10)
        except fw.FlussWriterError:
            pass
    assert state is not None
    # Exactly once, also after teardown (catches a late second invocation).
    if not errors:
        with state.lock:
            for id_, r in state.ops.items():
                want = 1 if (r.accepted and r.notify == "callback") else 0
                if len(r.invocations) != want:
                    errors.append(f"{id_}: callback ran {len(r.invocations)} times after teardown, expected {want}")
    with state.lock:
        errors.extend(state.failures)
    if errors:
        raise GoldenError("\n".join(errors))


def run_doc(doc: Any, bootstrap: str = "embedded", stem: str = "") -> None:
    """Parse and run one scenario document; raises GoldenError on any failure."""
    sc = parse_scenario(doc)
    try:
        run_scenario(sc, bootstrap, stem)
    except GoldenError as e:
        if sc.known_bug is not None:
            raise GoldenError(f"known_bug ({sc.known_bug}):\n{e}") from None
        raise
    if sc.known_bug is not None:
        raise GoldenError(f'known_bug ({sc.known_bug}): the scenario passed; remove "known_bug" from the file')


def run_file(path: pathlib.Path, bootstrap: str = "embedded") -> None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_no_duplicate_keys)
    except ValueError as e:
        raise GoldenError(f"{path.name}: invalid JSON: {e}") from None
    run_doc(doc, bootstrap, path.stem)


# ============================================================================ against a real cluster
#
# With FLUSS_BOOTSTRAP_SERVERS set, every scenario that injects no faults (no top-level
# ``faults``, no ``inject`` step) also runs against the real server as ``cluster/<stem>``: a
# fresh table per run, read-back through ``Table.scan`` / ``Table.lookup``. Under CI=true
# without it, ``cluster/required`` fails; otherwise nothing is collected (tests-py/conftest.py
# prints a loud line).

CLUSTER_BOOTSTRAP = os.environ.get("FLUSS_BOOTSTRAP_SERVERS", "")
CI = os.environ.get("CI", "").lower() in ("true", "1")
CLUSTER_DB = f"golden_py_{os.getpid()}_{uuid.uuid4().hex[:6]}"

#: Fault-free scenarios that cannot be deterministic on a real server, with the reason. Reviewed:
#: keep this minimal, and every entry must name a file that exists and needs no faults.
CLUSTER_EXCLUDED: dict[str, str] = {}


def _steps_inject(steps: list[Step]) -> bool:
    return any(s.op == "inject" or any(_steps_inject(t) for _n, t in s.threads) for s in steps)


def needs_no_faults(path: pathlib.Path) -> bool:
    """Whether a file injects no faults. A file that does not parse counts as needing none, so
    that its error is reported in cluster mode too."""
    try:
        sc = parse_scenario(json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_no_duplicate_keys))
    except (ValueError, GoldenError):
        return True
    return not sc.faults and not _steps_inject(sc.steps)


CLUSTER_FILES = [p for p in FILES if needs_no_faults(p)]


# ============================================================================ tests


def test_golden_files_exist() -> None:
    assert len(FILES) >= 30, f"expected the golden scenarios in {GOLDEN_DIR}, found {len(FILES)}"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden(path: pathlib.Path) -> None:
    try:
        run_file(path)
    except GoldenError as e:
        pytest.fail(f"{path.name}:\n{e}", pytrace=False)


def test_cluster_exclusions_are_reviewed() -> None:
    stems = {p.stem for p in CLUSTER_FILES}
    for stem, reason in CLUSTER_EXCLUDED.items():
        assert stem in stems, f"CLUSTER_EXCLUDED names {stem!r}, which is not a fault-free golden file"
        assert reason.strip(), f"CLUSTER_EXCLUDED[{stem!r}] needs a reason"
    assert len(CLUSTER_FILES) >= 15, f"only {len(CLUSTER_FILES)} golden files need no faults"


if CLUSTER_BOOTSTRAP:
    _CLUSTER_RUN = [p for p in CLUSTER_FILES if p.stem not in CLUSTER_EXCLUDED]

    @pytest.mark.timeout(30)
    @pytest.mark.parametrize("path", _CLUSTER_RUN, ids=[f"cluster/{p.stem}" for p in _CLUSTER_RUN])
    def test_golden_cluster(path: pathlib.Path, cluster_databases: list[str]) -> None:
        # Tables stay until the session's end (see cluster_databases in tests-py/conftest.py).
        if CLUSTER_DB not in cluster_databases:
            cluster_databases.append(CLUSTER_DB)
        try:
            run_file(path, CLUSTER_BOOTSTRAP)
        except GoldenError as e:
            pytest.fail(f"cluster/{path.name} (against {CLUSTER_BOOTSTRAP}):\n{e}", pytrace=False)

elif CI:

    @pytest.mark.parametrize("case", ["cluster/required"])
    def test_golden_cluster(case: str) -> None:
        pytest.fail("CI=true but FLUSS_BOOTSTRAP_SERVERS is not set: the fault-free golden scenarios must also run "
                    "against a real Fluss cluster", pytrace=False)


# ----- self-tests: the runner fails on what it must not accept

_BASE: dict[str, Any] = {
    "description": "runner self-test",
    "table": {
        "kind": "log",
        "bucket_count": 1,
        "columns": [{"name": "id", "type": "INT", "nullable": False}, {"name": "msg", "type": "STRING"}],
        "bucket_key": ["id"],
    },
    "config": {"client.writer.batch-timeout": "5ms", "client.writer.retry-backoff": "5ms"},
    "writers": [{"name": "w", "kind": "append"}],
    "steps": [
        {"op": "append", "id": "a1", "row": [1, "x"], "bucket": 0, "offset": 0, "expect": "ok"},
        {"op": "flush", "expect": "ok"},
    ],
    "expect": {"read_back": {"buckets": {"0": [[1, "x"]]}}},
}


def _mutated(fn: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    doc = copy.deepcopy(_BASE)
    fn(doc)
    return doc


def test_self_base_scenario_passes() -> None:
    run_doc(copy.deepcopy(_BASE))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(retries=3), r"scenario: unknown field\(s\) \['retries'\]"),
        (lambda d: d["steps"].append({"op": "frobnicate"}), r"unknown op 'frobnicate'"),
        (lambda d: d["steps"][0].update(expect={"callback_error": "NO_SUCH_CODE"}), r"unknown error code name 'NO_SUCH_CODE'"),
        (
            lambda d: d["steps"][0].update(row=[1, {"repeat": "ab", "count": 1, "times": 2}]),
            r"repeat value: unknown field\(s\) \['times'\]",
        ),
        (lambda d: d["table"]["columns"][1].update(type="TIMESTAMP"), r"unsupported column type 'TIMESTAMP'"),
        (lambda d: d["steps"][0].update(offset=5), r"a1: offset 0 expected 5"),
        (
            lambda d: d["steps"][0].update(expect={"sync_error": "WRITER_CLOSED"}),
            r"expected sync_error WRITER_CLOSED, but the submission was accepted",
        ),
        (lambda d: d["expect"]["read_back"]["buckets"].update({"0": [[1, "y"]]}), r"read-back bucket 0"),
        (lambda d: d.update(known_bug="self-test"), r"known_bug \(self-test\): the scenario passed"),
    ],
    ids=["unknown_field", "unknown_op", "unknown_code", "unknown_value_form", "unknown_type", "wrong_offset",
         "wrong_outcome", "wrong_read_back", "known_bug_passing"],
)
def test_self_runner_fails(mutate: Callable[[dict[str, Any]], None], message: str) -> None:
    with pytest.raises(GoldenError, match=message):
        run_doc(_mutated(mutate))


def test_self_wrong_bucket_fails() -> None:
    """Of the two buckets, the row has exactly one: stating the other one fails."""
    outcomes = []
    for stated in (0, 1):
        doc = _mutated(lambda d: d["table"].update(bucket_count=2))
        del doc["expect"]
        doc["steps"][0]["bucket"] = stated
        try:
            run_doc(doc)
            outcomes.append("passed")
        except GoldenError as e:
            assert "a1: completion bucket" in str(e) and f"the file says {stated}" in str(e)
            outcomes.append("failed")
    assert sorted(outcomes) == ["failed", "passed"]


def test_self_sync_error_destroys_callback() -> None:
    doc = _mutated(lambda d: d["steps"].extend([
        {"op": "close", "expect": "ok"},
        {"op": "append", "id": "a2", "row": [2, "y"], "bucket": 0, "expect": {"sync_error": "WRITER_CLOSED"}},
    ]))
    run_doc(doc)
