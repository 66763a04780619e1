"""The Python runner of the golden scenarios (``golden/*.json``; format: ``golden/README.md`` and
``golden/schema/scenario.schema.json``).

It runs a scenario's plan (``golden-check --plan``: the file validated and resolved once, in
``rust/golden``) and only runs: every step through the public Python API, recording a trace of
events (submit begin/end, callback start/return with a global sequence number, call begin/end,
read-back rows). The one checker, ``golden-check`` (the Rust and C++ runners' traces go through the
same one), judges the trace against the scenario's expectations; its message is the test's
failure. One test per file (id = file stem); with FLUSS_BOOTSTRAP_SERVERS set, every fault-free
file again as ``cluster/<stem>`` (fresh table, read-back through ``Table.scan`` /
``Table.lookup``). Nothing is skipped.

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
from cluster.support import connect, create_table
from fluss_writer import testing

REPO = pathlib.Path(__file__).resolve().parents[2]
FILES = sorted(REPO.joinpath("golden").glob("*.json"))
TABLE = "fluss.golden"
GATE_TIMEOUT_S = 30.0
ARROW_TYPES = {"INT": pa.int32(), "BIGINT": pa.int64(), "STRING": pa.utf8(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_()}


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


def _columns(cols: list[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    return [(c["name"], c["type"], c["nullable"]) for c in cols]


class Run:
    """One run of one plan: the trace and what the steps need (writers, results, gates)."""

    def __init__(self, plan: dict[str, Any], target: str) -> None:
        self.plan = plan
        self.conn: Any = None
        self.lock = threading.Lock()
        self.events: list[dict[str, Any]] = []
        self.trace: dict[str, Any] = {"runner": "python", "target": target, "events": self.events}
        self.writers: dict[str, Any] = {}
        self.ops: dict[str, dict[str, Any]] = {}  # id -> writer, notify, accepted, started, returned, result
        self.gates: dict[str, threading.Event] = {}
        self.cb_errors = {w["name"]: 0 for w in plan["writers"]}
        self.engine: Any = None
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

    def inject(self, faults: list[dict[str, Any]]) -> None:
        if faults and self.engine is None:
            raise RunnerError("faults need the embedded engine")
        for f in faults:
            at, b, n = f["partition"], f["bucket"], f["times"]
            if f["coordinator"]:
                self.engine.inject_coordinator_error(f["code"], f["message"], n)
            elif f["kind"] == "error":
                self.engine.inject_error(TABLE, b, f["code"], f["message"], n, partition=at)
            elif f["kind"] == "delay":
                self.engine.inject_delay(TABLE, b, f["ms"] / 1000.0, n, partition=at)
            else:
                self.engine.inject_drop_connection(TABLE, b, f["after_apply"], n, partition=at)


class GoldenCallback:
    """The callable handed to the binding (an object, so that a weakref shows it destroyed)."""

    def __init__(self, run: Run, id_: str, spec: dict[str, Any]) -> None:
        self.run, self.id, self.spec = run, id_, spec

    def __call__(self, c: fw.WriteCompletion) -> None:
        run, spec = self.run, self.spec
        start = {"ev": "callback_start", "id": self.id, "thread": _thread(), **_completion(c)}
        with run.lock:
            run.events.append({"seq": len(run.events), **start})
            run.ops[self.id]["started"] = True
        try:
            time.sleep(spec["sleep_ms"] / 1000.0)
            if spec["gate"] is not None and not run.gate(spec["gate"]).wait(GATE_TIMEOUT_S):
                run.ev("runner_error", message=f"callback of {self.id}: gate {spec['gate']!r} never opened")
            if spec["call"] is not None:
                try:
                    run_step(run, spec["call"])
                except Exception as e:  # noqa: BLE001 - recorded for the checker
                    run.ev("runner_error", message=f"{self.id}.call: {e!r}")
            if spec["raise"]:
                raise RuntimeError(f"golden: the callback of {self.id} raises on purpose")
        finally:
            with run.lock:
                run.events.append({"seq": len(run.events), "ev": "callback_return", "id": self.id, "thread": _thread()})
                run.ops[self.id]["returned"] = True


def submit(run: Run, step: dict[str, Any]) -> None:
    op, id_, notify = step["op"], step["id"], step["notify"]
    with run.lock:
        run.ops[id_] = {"writer": step["writer"], "notify": notify}
    w = run.writers[step["writer"]]
    fn = {"append": "append", "upsert": "upsert", "delete": "delete", "append_arrow": "write_arrow_batch"}[op]
    arg: Any = step["rows"][0]
    if op == "append_arrow":
        cols = step["columns"]
        schema = pa.schema([pa.field(c["name"], ARROW_TYPES[c["type"]], nullable=c["nullable"]) for c in cols])
        arrays = [pa.array([r[i] for r in step["rows"]], type=ARROW_TYPES[c["type"]]) for i, c in enumerate(cols)]
        arg = pa.RecordBatch.from_arrays(arrays, schema=schema)
    cb: Optional[GoldenCallback] = GoldenCallback(run, id_, step["callback"]) if notify == "callback" else None
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


def call(run: Run, step: dict[str, Any]) -> None:
    """flush, close, wait and the DDL steps: one call, recorded from begin to end."""
    op, timeout, w = step["op"], _secs(step["timeout_ms"]), run.writers.get(step["writer"])
    result: Any = result_of(run, step["target"]) if op == "wait" else None
    fns: dict[str, Any] = {
        "flush": lambda: w.flush(timeout),
        "close": lambda: w.close(timeout),
        "wait": lambda: result.wait(timeout),
        "create_partition": lambda: run.admin.create_partition(run.path, step["spec"], False),
        "drop_partition": lambda: run.admin.drop_partition(run.path, step["spec"], False),
        "alter_table": lambda: run.admin.alter_table(run.path, add_columns=_columns(step["columns"])),
        "create_writer": lambda: open_writer(run, step["writer_spec"]),
        "alter_bucket_count": lambda: run.admin.alter_bucket_count(run.path, step["bucket_count"]),
    }
    if op not in fns:
        raise RunnerError(f"{step['path']}: op {op!r} is not known to this runner")
    run.ev("call_begin", step=step["path"], call=op, thread=_thread())
    t0 = time.monotonic()
    code = 0
    try:
        fns[op]()
    except fw.FlussWriterError as e:
        code = e.code
    elapsed_ms = (time.monotonic() - t0) * 1000.0
    with run.lock:
        ends = op in ("flush", "close")
        results = [(k, r.get("result")) for k, r in run.ops.items() if ends and r["writer"] == step["writer"]]
    done = [k for k, res in results if res is not None and res.done()]
    run.ev("call_end", step=step["path"], code=code, elapsed_ms=elapsed_ms, results_done=done)


def open_writer(run: Run, ws: dict[str, Any]) -> None:
    """A writer of the table as it is now (after a schema change: the new columns), with an error
    handler that counts."""
    table = run.conn.get_table(run.path)
    factory = table.new_upsert() if ws["upsert"] else table.new_append()
    if ws["partial_update"] is not None:
        factory = factory.partial_update_by_name(ws["partial_update"])

    def on_error(_exc: BaseException, _op: str, name: str = ws["name"]) -> None:
        with run.lock:
            run.cb_errors[name] += 1

    run.writers[ws["name"]] = factory.create_writer(
        max_pending_callbacks=ws["max_pending_callbacks"], executor=ws["sharded"], on_callback_error=on_error
    )


def run_step(run: Run, step: dict[str, Any]) -> None:
    op, path = step["op"], step["path"]
    if op in ("append", "upsert", "delete", "append_arrow"):
        submit(run, step)
    elif op == "add_callback":
        result = result_of(run, step["target"])
        with run.lock:
            run.ops[step["id"]] = {"writer": run.ops[step["target"]]["writer"], "notify": "callback", "accepted": True}
        run.ev("add_callback", id=step["id"], target=step["target"], thread=_thread())
        result.add_callback(GoldenCallback(run, step["id"], step["callback"]))
    elif op == "sleep":
        time.sleep(step["ms"] / 1000.0)
    elif op == "open_gate":
        run.gate(step["gate"]).set()
    elif op == "stats":
        run.ev("stats", step=path, writer=step["writer"], stats=dict(run.writers[step["writer"]].stats()))
    elif op == "await_callback":
        deadline = time.monotonic() + step["timeout_ms"] / 1000.0
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
        barrier = threading.Barrier(len(step["threads"]))
        errors: list[str] = []

        def body(name: str, steps: list[dict[str, Any]]) -> None:
            run.ev("thread", thread=_thread(), name=name)
            try:
                barrier.wait(30)
                for s in steps:
                    run_step(run, s)
            except Exception as e:  # noqa: BLE001 - recorded for the checker
                errors.append(f"thread {name}: {e}")

        ts = [threading.Thread(target=body, args=(t["name"], t["steps"]), name=f"golden-{t['name']}") for t in step["threads"]]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        if errors:
            raise RunnerError("\n".join(errors))
    else:
        call(run, step)


def run_scenario(plan: dict[str, Any], bootstrap: str, stem: str) -> dict[str, Any]:
    """Run on the embedded engine or (``bootstrap`` = ``host:port``) a real cluster; return the trace."""
    cluster = bootstrap != "embedded"
    run = Run(plan, "cluster" if cluster else "embedded")
    try:
        conn = connect(bootstrap, plan["config"]) if cluster else fw.connect(bootstrap, plan["config"])
    except fw.FlussWriterError as e:
        run.ev("runner_error", message=f"connect: {e}")
        return run.trace
    try:
        missing = [c for c in plan["requires"] if not conn.admin().server_supports(c)]
    except fw.FlussWriterError as e:
        run.ev("runner_error", message=f"requires: {e}")
        return run.trace
    if missing:
        for c in missing:
            run.ev("unsupported", capability=c)
        conn.close(10)
        run.ev("teardown")
        return run.trace
    try:
        t = plan["table"]
        schema = fw.Schema(_columns(t["columns"]), primary_keys=t["primary_key"] or None)
        desc = fw.TableDescriptor(schema, bucket_count=t["bucket_count"], bucket_keys=t["bucket_key"] or None,
                                  partition_keys=t["partition_keys"] or None, properties=t["properties"] or None)
        if cluster:
            conn.admin().create_database(CLUSTER_DB, True)
            path = create_table(conn, lambda: f"{CLUSTER_DB}.t{stem.split('_')[0]}_{uuid.uuid4().hex[:10]}", desc)
        else:
            path = TABLE
            conn.admin().create_table(path, desc, False)
            run.engine = testing.engine(conn)
        run.conn, run.admin, run.path = conn, conn.admin(), path
        for spec in plan["partitions"]:
            run.admin.create_partition(path, spec, False)
        run.inject(plan["faults"])
        for ws in plan["writers"]:
            if not ws["deferred"]:
                open_writer(run, ws)
        run.ev("thread", thread=_thread(), name="main")
        for s in plan["steps"]:
            run_step(run, s)
    except (RunnerError, fw.FlussWriterError, RuntimeError, KeyError, TypeError, ValueError) as e:
        run.ev("runner_error", message=f"{type(e).__name__}: {e}")
    settle(run, plan["settle_ms"])
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
    """The plan's read-back, with the table loaded now (after a schema change it reads every column)."""
    if run.conn is None:
        return
    table, rb = run.conn.get_table(run.path), run.plan["read_back"]
    scans = [{**s, "rows": [list(r.row) for r in table.scan(s["bucket"], 0, partition=s["partition"])]} for s in rb["scans"]]
    lookups = [{"key": k, "row": None if (got := table.lookup(k)) is None else list(got)} for k in rb["lookups"]]
    run.trace["read_back"] = {"scans": scans, "lookups": lookups}


def golden_check() -> pathlib.Path:
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return pathlib.Path(os.environ.get("GOLDEN_CHECK") or target / "debug" / "golden-check")


def plan_of(path: pathlib.Path) -> Optional[dict[str, Any]]:
    """The file's plan, or None when it does not validate (the check then says why)."""
    exe = golden_check()
    if not exe.is_file():
        return None
    p = subprocess.run([str(exe), "--plan", str(path)], capture_output=True, text=True, timeout=60)
    return json.loads(p.stdout) if p.returncode == 0 else None


def run_and_check(path: pathlib.Path, tmp: pathlib.Path, bootstrap: str = "embedded") -> None:
    exe = golden_check()
    assert exe.is_file(), f"{exe} is missing: `cargo build -p fluss-writer-golden --bin golden-check` (tests-py/run.sh does)"
    plan = plan_of(path)
    target = "embedded" if bootstrap == "embedded" else "cluster"
    trace: dict[str, Any] = {"runner": "python", "target": target, "events": []}
    if plan is not None and (target == "embedded" or plan["cluster_ok"]):
        trace = run_scenario(plan, bootstrap, path.stem)  # (with faults on a cluster: the checker refuses the empty trace)
    out = tmp / f"trace-{path.stem}.json"
    out.write_text(json.dumps(trace, indent=1, default=repr), encoding="utf-8")
    p = subprocess.run([str(exe), str(path), str(out)], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        pytest.fail(f"{p.stderr}{p.stdout}(trace: {out})", pytrace=False)


CLUSTER_BOOTSTRAP = os.environ.get("FLUSS_BOOTSTRAP_SERVERS", "")
CI = os.environ.get("CI", "").lower() in ("true", "1")
CLUSTER_DB = f"golden_py_{os.getpid()}_{uuid.uuid4().hex[:6]}"
# A file that does not validate counts as fault-free, so that the checker reports it in cluster mode too.
CLUSTER_FILES = [p for p in FILES if (plan := plan_of(p)) is None or plan["cluster_ok"]] if golden_check().is_file() else []


def test_golden_files_exist() -> None:
    assert golden_check().is_file(), f"{golden_check()} is missing (tests-py/run.sh builds it)"
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
