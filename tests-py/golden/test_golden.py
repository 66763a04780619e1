"""The Python runner of the golden scenarios (``golden/*.json``; format: ``golden/README.md`` and
``golden/schema/scenario.schema.json``).

It only runs: every step through the public Python API, recording a trace of events (submit
begin/end, callback start/return with a global sequence number, flush/close/wait begin/end,
read-back rows). The one checker, ``golden-check`` (``rust/golden``; the Rust and C++ runners'
traces go through the same one), judges the trace against the scenario's expectations; its
message is the test's failure. One test per file (id = file stem); with FLUSS_BOOTSTRAP_SERVERS
set, every fault-free file again as ``cluster/<stem>`` (fresh table, read-back through
``Table.scan`` / ``Table.lookup``). Nothing is skipped.

``golden-check`` is found through ``$GOLDEN_CHECK``, else ``$CARGO_TARGET_DIR/debug/golden-check``
(tests-py/run.sh builds it).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import threading
import time
import uuid
import weakref
from typing import Any, Optional

import fluss_writer as fw
import pyarrow as pa
import pytest
from cluster.support import create_table
from fluss_writer import testing

REPO = pathlib.Path(__file__).resolve().parents[2]
FILES = sorted(REPO.joinpath("golden").glob("*.json"))
TABLE = "fluss.golden"
GATE_TIMEOUT_S = 30.0
ARROW_TYPES = {"INT": pa.int32(), "BIGINT": pa.int64(), "STRING": pa.utf8(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_()}
CODES: dict[str, int] = {n: c for n, c, _r, _cls in fw.CLIENT_CODES}
CODES.update({n: c for n, c, _r in fw.SERVER_CODES if n not in CODES})


class RunnerError(Exception):
    """Something the runner could not do: recorded in the trace, and the steps stop."""


def _thread() -> str:
    return f"{threading.get_ident()}/{threading.get_native_id()}"  # idents alone get reused


def _completion(c: fw.WriteCompletion) -> dict[str, Any]:
    return {
        "code": c.error_code, "bucket": c.bucket, "partition": c.partition, "offset": c.offset,
        "bucket_results": [
            {"partition": b.partition, "bucket": b.bucket, "rows": b.rows, "code": 0 if b.error is None else b.error.code}
            for b in c.bucket_results
        ],
    }


def _secs(ms: Optional[int]) -> Optional[float]:
    return None if ms is None else ms / 1000.0


class Run:
    """One run of one scenario: the trace and what the steps need (writers, results, gates)."""

    def __init__(self, sc: dict[str, Any], target: str) -> None:
        self.sc = sc
        # Every column the table gets (alter_table steps add at the end): a row of width n has
        # the first n of them.
        self.columns = sc["table"]["columns"] + [
            c for s in sc["steps"] if s["op"] == "alter_table" and s.get("expect", "ok") == "ok" for c in s["add_columns"]
        ]
        self.conn: Any = None
        self.lock = threading.Lock()
        self.events: list[dict[str, Any]] = []
        self.trace: dict[str, Any] = {"runner": "python", "target": target, "events": self.events}
        self.writers: dict[str, Any] = {}
        self.default_writer = sc["writers"][0]["name"]
        self.ops: dict[str, dict[str, Any]] = {}  # id -> writer, notify, accepted, started, returned, result
        self.gates: dict[str, threading.Event] = {}
        self.cb_errors = {w["name"]: 0 for w in sc["writers"]}
        self.engine: Any = None
        self.table: Any = None
        self.admin: Any = None
        self.path = TABLE

    def ev(self, ev: str, **fields: Any) -> None:
        with self.lock:
            self.events.append({"seq": len(self.events), "ev": ev, **fields})

    def gate(self, name: str) -> threading.Event:
        with self.lock:
            return self.gates.setdefault(name, threading.Event())

    def cb_state(self, id_: str) -> str:
        with self.lock:
            r = self.ops.get(id_, {})
            return "returned" if r.get("returned") else "running" if r.get("started") else "not_started"

    def writer(self, step: dict[str, Any]) -> str:
        return step.get("writer", self.default_writer)

    def value(self, v: Any, col: dict[str, Any]) -> Any:
        if isinstance(v, dict):
            return v["repeat"] * v["count"]
        return float(v) if col["type"] == "DOUBLE" and v is not None else v

    def row(self, r: list[Any]) -> list[Any]:
        return [self.value(v, c) for v, c in zip(r, self.columns)]

    def key(self, k: list[Any]) -> list[Any]:
        cols = {c["name"]: c for c in self.columns}
        return [self.value(v, cols[n]) for v, n in zip(k, self.sc["table"]["primary_key"])]

    def spec(self, name: str) -> dict[str, str]:
        """A partition's spec from its name (values in partition-key order, joined by ``$``)."""
        return dict(zip(self.sc["table"]["partition_keys"], name.split("$")))

    def inject(self, faults: list[dict[str, Any]]) -> None:
        if self.engine is None:
            raise RunnerError("faults need the embedded engine")
        for f in faults:
            at = f.get("partition")
            if f["fault"] == "error":
                code = CODES.get(f["code"])
                if code is None:
                    raise RunnerError(f"unknown error code name {f['code']!r}")
                message = f.get("message", "injected by a golden scenario")
                self.engine.inject_error(TABLE, f["bucket"], code, message, f["times"], partition=at)
            elif f["fault"] == "delay":
                self.engine.inject_delay(TABLE, f["bucket"], f["ms"] / 1000.0, f["times"], partition=at)
            else:
                self.engine.inject_drop_connection(TABLE, f["bucket"], f["after_apply"], f["times"], partition=at)


class GoldenCallback:
    """The callable handed to the binding (an object, so that a weakref shows it destroyed)."""

    def __init__(self, run: Run, id_: str, spec: Any) -> None:
        self.run, self.id, self.spec = run, id_, spec if isinstance(spec, dict) else {}

    def __call__(self, c: fw.WriteCompletion) -> None:
        run, spec = self.run, self.spec
        start = {"ev": "callback_start", "id": self.id, "thread": _thread(), **_completion(c)}
        with run.lock:
            run.events.append({"seq": len(run.events), **start})
            run.ops[self.id]["started"] = True
        try:
            time.sleep(spec.get("sleep_ms", 0) / 1000.0)
            if "gate" in spec and not run.gate(spec["gate"]).wait(GATE_TIMEOUT_S):
                run.ev("runner_error", message=f"callback of {self.id}: gate {spec['gate']!r} never opened")
            if "call" in spec:
                try:
                    run_step(run, spec["call"], f"{self.id}.call")
                except Exception as e:  # noqa: BLE001 - recorded for the checker
                    run.ev("runner_error", message=f"{self.id}.call: {e!r}")
            if spec.get("raise"):
                raise RuntimeError(f"golden: the callback of {self.id} raises on purpose")
        finally:
            with run.lock:
                run.events.append({"seq": len(run.events), "ev": "callback_return", "id": self.id, "thread": _thread()})
                run.ops[self.id]["returned"] = True


def submit(run: Run, step: dict[str, Any]) -> None:
    op, id_, notify = step["op"], step["id"], step.get("notify", "callback")
    with run.lock:
        run.ops[id_] = {"writer": run.writer(step), "notify": notify}
    w = run.writers[run.writer(step)]
    fn = {"append": "append", "upsert": "upsert", "delete": "delete", "append_arrow": "write_arrow_batch"}[op]
    if op == "append_arrow":
        rows = [run.row(r) for r in step["rows"]]
        columns = run.columns[: len(rows[0])]
        schema = pa.schema([pa.field(c["name"], ARROW_TYPES[c["type"]], nullable=c.get("nullable", True)) for c in columns])
        cols = [pa.array([r[i] for r in rows], type=ARROW_TYPES[c["type"]]) for i, c in enumerate(columns)]
        arg: Any = pa.RecordBatch.from_arrays(cols, schema=schema)
    else:
        arg = run.key(step["key"]) if op == "delete" else run.row(step["row"])
    cb: Optional[GoldenCallback] = GoldenCallback(run, id_, step.get("callback")) if notify == "callback" else None
    cb_ref = None if cb is None else weakref.ref(cb)
    result, code = None, 0
    run.ev("submit_begin", id=id_, thread=_thread())
    t0 = time.monotonic()
    try:
        if cb is not None:
            getattr(w, fn)(arg, callback=cb)
        elif notify == "result":
            result = getattr(w, fn)(arg)
        elif hasattr(w, fn + "_detached"):
            getattr(w, fn + "_detached")(arg)
        else:
            getattr(w, fn)(arg)  # no detached form of this op in the Python API: drop the WriteResult
    except fw.FlussWriterError as e:
        code = e.code
    elapsed_ms = (time.monotonic() - t0) * 1000.0
    cb = None  # drop this frame's reference: only the binding may still hold the callable
    with run.lock:
        run.ops[id_].update(accepted=code == 0, result=result)
    destroyed = None if code == 0 or cb_ref is None else cb_ref() is None
    run.ev("submit_end", id=id_, thread=_thread(), code=code, elapsed_ms=elapsed_ms, callback_destroyed=destroyed)


def result_of(run: Run, target: str) -> fw.WriteResult:
    with run.lock:
        result = run.ops.get(target, {}).get("result")
    if result is None:
        raise RunnerError(f"{target} has no accepted WriteResult")
    return result


def call(run: Run, step: dict[str, Any], path: str) -> None:
    op, timeout = step["op"], _secs(step.get("timeout_ms"))
    if op == "wait":
        result = result_of(run, step["target"])
        fn: Any = lambda: result.wait(timeout)  # noqa: E731
    else:
        w = run.writers[run.writer(step)]
        fn = lambda: (w.flush if op == "flush" else w.close)(timeout)  # noqa: E731
    run.ev("call_begin", step=path, call=op, thread=_thread())
    t0 = time.monotonic()
    code = 0
    try:
        fn()
    except fw.FlussWriterError as e:
        code = e.code
    elapsed_ms = (time.monotonic() - t0) * 1000.0
    with run.lock:
        results = [] if op == "wait" else [(k, r.get("result")) for k, r in run.ops.items() if r["writer"] == run.writer(step)]
    done = [k for k, res in results if res is not None and res.done()]
    run.ev("call_end", step=path, code=code, elapsed_ms=elapsed_ms, results_done=done)


def partition_ddl(run: Run, step: dict[str, Any], path: str) -> None:
    op, spec = step["op"], run.spec(step["partition"])
    run.ev("call_begin", step=path, call=op, thread=_thread())
    t0 = time.monotonic()
    code = 0
    try:
        if op == "create_partition":
            run.admin.create_partition(run.path, spec, False)
        else:
            run.admin.drop_partition(run.path, spec, False)
    except fw.FlussWriterError as e:
        code = e.code
    run.ev("call_end", step=path, code=code, elapsed_ms=(time.monotonic() - t0) * 1000.0, results_done=[])


def schema_ddl(run: Run, step: dict[str, Any], path: str) -> None:
    """alter_table (columns added at the end) and create_writer (a deferred writer, of the table
    as it is now)."""
    op = step["op"]
    run.ev("call_begin", step=path, call=op, thread=_thread())
    t0 = time.monotonic()
    code = 0
    try:
        if op == "alter_table":
            cols = [(c["name"], c["type"], c.get("nullable", True)) for c in step["add_columns"]]
            run.admin.alter_table(run.path, add_columns=cols)
        else:
            ws = next(w for w in run.sc["writers"] if w["name"] == step["writer"])
            run.writers[ws["name"]] = open_writer(run, ws)
    except fw.FlussWriterError as e:
        code = e.code
    run.ev("call_end", step=path, code=code, elapsed_ms=(time.monotonic() - t0) * 1000.0, results_done=[])


def open_writer(run: Run, ws: dict[str, Any]) -> Any:
    """A writer of the table as it is now, with an error handler that counts."""
    table = run.conn.get_table(run.path)
    factory = table.new_upsert() if ws["kind"] == "upsert" else table.new_append()
    if "partial_update" in ws:
        factory = factory.partial_update_by_name(ws["partial_update"])

    def on_error(_exc: BaseException, _op: str, name: str = ws["name"]) -> None:
        with run.lock:
            run.cb_errors[name] += 1

    ex = ws.get("executor")
    return factory.create_writer(
        max_pending_callbacks=ws.get("max_pending_callbacks"),
        executor=ex["sharded"] if isinstance(ex, dict) else None,
        on_callback_error=on_error,
    )


def run_step(run: Run, step: dict[str, Any], path: str) -> None:
    op = step["op"]
    if op in ("append", "upsert", "delete", "append_arrow"):
        submit(run, step)
    elif op in ("alter_table", "create_writer"):
        schema_ddl(run, step, path)
    elif op in ("flush", "close", "wait"):
        call(run, step, path)
    elif op in ("create_partition", "drop_partition"):
        partition_ddl(run, step, path)
    elif op == "add_callback":
        result = result_of(run, step["target"])
        with run.lock:
            run.ops[step["id"]] = {"writer": run.ops[step["target"]]["writer"], "notify": "callback", "accepted": True}
        run.ev("add_callback", id=step["id"], target=step["target"], thread=_thread())
        result.add_callback(GoldenCallback(run, step["id"], step.get("callback")))
    elif op == "sleep":
        time.sleep(step["ms"] / 1000.0)
    elif op == "open_gate":
        run.gate(step["gate"]).set()
    elif op == "await_callback":
        deadline = time.monotonic() + step.get("timeout_ms", 10_000) / 1000.0
        reached = (lambda s: s != "not_started") if step["state"] == "running" else (lambda s: s == "returned")
        s = run.cb_state(step["target"])
        while not reached(s) and time.monotonic() < deadline:
            time.sleep(0.001)
            s = run.cb_state(step["target"])
        run.ev("await", step=path, target=step["target"], state=s)
        if not reached(s):
            raise RunnerError(f"{path}: stopped: the callback of {step['target']} is still {s}")
    elif op == "assert_callback":
        run.ev("observe", step=path, target=step["target"], state=run.cb_state(step["target"]))
    elif op == "inject":
        run.inject(step["faults"])
    elif op == "parallel":
        threads = step["threads"]
        barrier = threading.Barrier(len(threads))
        errors: list[str] = []

        def body(name: str, steps: list[dict[str, Any]]) -> None:
            run.ev("thread", thread=_thread(), name=name)
            try:
                barrier.wait(30)
                for i, s in enumerate(steps):
                    run_step(run, s, f"{path}.{name}[{i}]")
            except Exception as e:  # noqa: BLE001 - recorded for the checker
                errors.append(f"thread {name}: {e}")

        ts = [threading.Thread(target=body, args=(n, s), name=f"golden-{n}") for n, s in sorted(threads.items())]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        if errors:
            raise RunnerError("\n".join(errors))
    else:
        raise RunnerError(f"{path}: op {op!r} is not known to this runner")


def run_scenario(sc: dict[str, Any], bootstrap: str, stem: str) -> dict[str, Any]:
    """Run on the embedded engine or (``bootstrap`` = ``host:port``) a real cluster; return the trace."""
    cluster = bootstrap != "embedded"
    run = Run(sc, "cluster" if cluster else "embedded")
    try:
        conn = fw.connect(bootstrap, sc.get("config", {}))
    except fw.FlussWriterError as e:
        run.ev("runner_error", message=f"connect: {e}")
        return run.trace
    try:
        t = sc["table"]
        schema = fw.Schema([(c["name"], c["type"], c.get("nullable", True)) for c in t["columns"]],
                           primary_keys=t.get("primary_key"))
        desc = fw.TableDescriptor(
            schema, bucket_count=t["bucket_count"], bucket_keys=t.get("bucket_key"), partition_keys=t.get("partition_keys")
        )
        if cluster:
            conn.admin().create_database(CLUSTER_DB, True)
            path = create_table(conn, lambda: f"{CLUSTER_DB}.t{stem.split('_')[0]}_{uuid.uuid4().hex[:10]}", desc)
        else:
            path = TABLE
            conn.admin().create_table(path, desc, False)
            run.engine = testing.engine(conn)
        run.admin, run.path = conn.admin(), path
        for p in t.get("partitions", []):
            run.admin.create_partition(path, run.spec(p), False)
        run.conn, run.table = conn, conn.get_table(path)
        if sc.get("faults"):
            run.inject(sc["faults"])
        for ws in sc["writers"]:
            if not ws.get("deferred"):
                run.writers[ws["name"]] = open_writer(run, ws)
        run.ev("thread", thread=_thread(), name="main")
        for i, s in enumerate(sc["steps"]):
            run_step(run, s, f"steps[{i}]")
    except (RunnerError, fw.FlussWriterError, RuntimeError, KeyError, TypeError, ValueError) as e:
        run.ev("runner_error", message=f"{type(e).__name__}: {e}")
    settle(run, sc.get("settle_timeout_ms", 10_000))
    try:
        read_back(run)
    except fw.FlussWriterError as e:
        run.ev("runner_error", message=f"read-back: {e}")
    for w in run.writers.values():
        try:
            w.close(10)
        except fw.FlussWriterError:
            pass
    try:
        conn.close(10)
    except fw.FlussWriterError:
        pass
    run.ev("teardown")
    return run.trace


def settle(run: Run, ms: int) -> None:
    """Wait for every accepted callback to return and every result to be done; then open the gates."""
    def pending() -> bool:
        with run.lock:
            return any(
                r.get("accepted") and ((r["notify"] == "callback" and not r.get("returned"))
                                       or (r["notify"] == "result" and not r["result"].done()))
                for r in run.ops.values()
            )

    deadline = time.monotonic() + ms / 1000.0
    while pending() and time.monotonic() < deadline:
        time.sleep(0.002)
    run.ev("settled")
    with run.lock:
        gates = list(run.gates.values())
        results = [(k, r["result"]) for k, r in run.ops.items() if r.get("result") is not None]
    for g in gates:
        g.set()
    for id_, res in results:
        c = res.try_get()
        run.ev("result", id=id_, completion=None if c is None else _completion(c))
    with run.lock:
        run.trace["callback_errors"] = dict(run.cb_errors)


def read_back(run: Run) -> None:
    t = run.sc["table"]
    if run.table is None:
        return
    run.table = run.conn.get_table(run.path)  # loaded now: after a schema change it reads every column
    if t["kind"] == "log" and t.get("partition_keys"):
        names = run.sc.get("expect", {}).get("read_back", {}).get("partitions", {})
        run.trace["read_back"] = {"partitions": {
            p: {str(b): [list(r.row) for r in run.table.scan(b, 0, partition=p)] for b in range(t["bucket_count"])} for p in names
        }}
    elif t["kind"] == "log":
        run.trace["read_back"] = {"buckets": {
            str(b): [list(r.row) for r in run.table.scan(b, 0)] for b in range(t["bucket_count"])
        }}
    else:
        lookups = run.sc.get("expect", {}).get("read_back", {}).get("lookups", [])
        out = []
        for lk in lookups:
            got = run.table.lookup(run.key(lk["key"]))
            out.append({"key": lk["key"], "row": None if got is None else list(got)})
        run.trace["read_back"] = {"lookups": out}


def golden_check() -> pathlib.Path:
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return pathlib.Path(os.environ.get("GOLDEN_CHECK") or target / "debug" / "golden-check")


def run_and_check(path: pathlib.Path, tmp: pathlib.Path, bootstrap: str = "embedded") -> None:
    exe = golden_check()
    assert exe.is_file(), f"{exe} is missing: `cargo build -p fluss-writer-golden --bin golden-check` (tests-py/run.sh does)"
    try:
        sc = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        sc = None  # the checker says what is wrong with the file
    target = "embedded" if bootstrap == "embedded" else "cluster"
    trace: dict[str, Any] = {"runner": "python", "target": target, "events": []}
    if isinstance(sc, dict) and (target == "embedded" or not uses_faults(sc)):
        trace = run_scenario(sc, bootstrap, path.stem)  # (with faults on a cluster: the checker refuses the empty trace)
    out = tmp / f"trace-{path.stem}.json"
    out.write_text(json.dumps(trace, indent=1, default=repr), encoding="utf-8")
    p = subprocess.run([str(exe), str(path), str(out)], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        pytest.fail(f"{p.stderr}{p.stdout}(trace: {out})", pytrace=False)


def uses_faults(sc: Any) -> bool:
    """Whether a scenario injects faults (a ``faults`` list or an ``inject`` step anywhere)."""
    if isinstance(sc, dict):
        return bool(sc.get("faults")) or sc.get("op") == "inject" or any(uses_faults(v) for v in sc.values())
    return isinstance(sc, list) and any(uses_faults(v) for v in sc)


CLUSTER_BOOTSTRAP = os.environ.get("FLUSS_BOOTSTRAP_SERVERS", "")
CI = os.environ.get("CI", "").lower() in ("true", "1")
CLUSTER_DB = f"golden_py_{os.getpid()}_{uuid.uuid4().hex[:6]}"
def _fault_free(path: pathlib.Path) -> bool:
    """A file that is not JSON counts as fault-free, so that the checker reports it in cluster mode too."""
    try:
        return not uses_faults(json.loads(path.read_text(encoding="utf-8")))
    except ValueError:
        return True


CLUSTER_FILES = [p for p in FILES if _fault_free(p)]


def test_golden_files_exist() -> None:
    assert len(FILES) >= 49, f"expected the golden scenarios in {REPO / 'golden'}, found {len(FILES)}"
    assert len(CLUSTER_FILES) >= 22, f"only {len(CLUSTER_FILES)} golden files need no faults"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden(path: pathlib.Path, tmp_path: pathlib.Path) -> None:
    run_and_check(path, tmp_path)


if CLUSTER_BOOTSTRAP:

    @pytest.mark.timeout(30)
    @pytest.mark.parametrize("path", CLUSTER_FILES, ids=[f"cluster/{p.stem}" for p in CLUSTER_FILES])
    def test_golden_cluster(path: pathlib.Path, tmp_path: pathlib.Path, cluster_databases: list[str]) -> None:
        # Tables stay until the session's end (see cluster_databases in tests-py/conftest.py).
        if CLUSTER_DB not in cluster_databases:
            cluster_databases.append(CLUSTER_DB)
        run_and_check(path, tmp_path, CLUSTER_BOOTSTRAP)

elif CI:

    @pytest.mark.parametrize("case", ["cluster/required"])
    def test_golden_cluster(case: str) -> None:
        pytest.fail("CI=true but FLUSS_BOOTSTRAP_SERVERS is not set: the fault-free golden scenarios must also run "
                    "against a real Fluss cluster", pytrace=False)
