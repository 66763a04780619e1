"""The per-record fast paths keep the contract.

- ``append``/``append_detached``/``upsert``/``delete`` take their arguments through vectorcall on
  Python 3.10+ (``fluss_writer._native``): every call form and every argument error behaves as
  documented.
- Consecutive writes with the same callable share one registration per run of records.
- The ``WriteCompletion`` (and its argument tuple) of a callback that kept nothing is refilled
  for the next callback; one that a callback kept never changes. ``WriteResult.wait`` does the
  same with the completion it returned last.
"""

from __future__ import annotations

import gc
import inspect
import weakref
from typing import Any, List, Tuple

import fluss_writer as fw
import pytest
from helpers import Recorder, make_table

NON_RETRIABLE = 15  # INVALID_TABLE_EXCEPTION


def stored(engine: Any, name: str, buckets: int) -> dict:
    """(bucket, offset) -> id of every stored record."""
    return {(b, r[0]): r[2][0] for b in range(buckets) for r in engine.scan(name, b)}


def test_kept_completions_never_change_and_refilled_ones_are_right(conn, engine) -> None:
    name = make_table(conn, buckets=2, bucket_keys=["id"])
    w = conn.get_table(name).new_append().create_writer()
    kept: List[Tuple[fw.WriteCompletion, int, int]] = []
    seen: List[Tuple[int, int]] = []
    n = [0]

    def cb(c: fw.WriteCompletion) -> None:
        n[0] += 1
        if n[0] % 3 == 0:
            kept.append((c, c.bucket, c.offset))  # keeps the object itself
        else:
            seen.append((c.bucket, c.offset))  # keeps only values

    for i in range(3000):
        w.append((i, f"m{i}"), callback=cb)
    w.flush()
    for i in range(3000, 3300):  # more callbacks after the kept ones
        w.append((i, f"m{i}"), callback=cb)
    w.flush()
    at = stored(engine, name, 2)
    assert len(at) == 3300
    for c, bucket, offset in kept:
        assert (c.bucket, c.offset) == (bucket, offset), "a kept completion changed after its callback"
        assert c.ok and c.table == name
    places = [(b, o) for _, b, o in kept] + seen
    assert len(set(places)) == 3300, "every record got its own (bucket, offset)"
    assert sorted(at[p] for p in places) == list(range(3300))
    w.close()


def test_refilled_completion_switches_between_error_and_success(conn, engine) -> None:
    name = make_table(conn, buckets=1)
    w = conn.get_table(name).new_append().create_writer()
    got: List[Tuple[bool, Any, int, int]] = []

    def cb(c: fw.WriteCompletion) -> None:
        got.append((c.ok, type(c.error).__name__ if c.error else None, c.error_code, c.offset))

    for i in range(50):
        w.append((i, "ok"), callback=cb)
    w.flush()
    engine.inject_error(name, 0, NON_RETRIABLE, "boom", times=1)
    for i in range(50, 80):
        w.append((i, "fails"), callback=cb)
    w.flush()
    for i in range(80, 100):
        w.append((i, "ok again"), callback=cb)
    w.flush()
    assert len(got) == 100
    assert all(g[0] and g[1] is None and g[2] == 0 for g in got[:50])
    assert [g[3] for g in got[:50]] == list(range(50))
    assert all(not g[0] and g[1] is not None and g[2] == NON_RETRIABLE and g[3] == -1 for g in got[50:80])
    assert all(g[0] and g[1] is None and g[2] == 0 for g in got[80:])
    assert [g[3] for g in got[80:]] == list(range(50, 70))
    w.close()


def test_waited_completions_kept_never_change_and_refilled_ones_are_right(conn, engine) -> None:
    """``WriteResult.wait`` refills the completion it returned last when nothing holds it any more:
    values read at once are each record's own, a kept completion never changes, and an error
    between successes is reported by its own record only."""
    name = make_table(conn, buckets=2, bucket_keys=["id"])
    w = conn.get_table(name).new_append().create_writer()
    results = [w.append((i, f"m{i}")) for i in range(600)]
    w.flush()
    engine.inject_error(name, 0, NON_RETRIABLE, "boom", times=1)
    failing = [w.append((i, "fails")) for i in range(600, 620)]
    w.flush()
    results += [w.append((i, f"m{i}")) for i in range(620, 700)]
    w.flush()
    kept: List[Tuple[fw.WriteCompletion, int, int]] = []
    places: List[Tuple[int, int]] = []
    for i, r in enumerate(results):
        c = r.wait()
        assert c.ok and c.error is None and c.table == name
        if i % 7 == 0:
            kept.append((c, c.bucket, c.offset))  # keeps the object itself
        places.append((c.bucket, c.offset))
        del c
    codes = [(r.wait().error_code, r.wait().offset) for r in failing]
    # The failed batch went to bucket 0; the other bucket's records of those ids may have passed.
    assert {code for code, _ in codes} <= {0, NON_RETRIABLE} and NON_RETRIABLE in {code for code, _ in codes}
    assert all(offset == -1 for code, offset in codes if code == NON_RETRIABLE)
    for c, bucket, offset in kept:
        assert (c.bucket, c.offset) == (bucket, offset), "a kept completion changed after a later wait"
        assert c.ok
    at = stored(engine, name, 2)
    assert len(set(places)) == 680, "every record got its own (bucket, offset)"
    assert sorted(at[p] for p in places) == [i for i in range(700) if not 600 <= i < 620]
    # The same result waited twice reports the same thing, in a distinct object only when kept.
    a = results[5].wait()
    b = results[5].wait()
    assert (a.bucket, a.offset) == (b.bucket, b.offset)
    # Results hold no Python reference the cyclic collector could follow: it does not track them
    # (many live results made its scans a fifth of the per-record result path).
    assert not any(gc.is_tracked(r) for r in results + failing)
    w.close()


def test_switching_callables_calls_each_exactly_for_its_records(conn, engine) -> None:
    name = make_table(conn, buckets=2, bucket_keys=["id"])
    w = conn.get_table(name).new_append().create_writer()
    a, b = Recorder(), Recorder()
    fresh: List[int] = []
    want_a, want_b, want_fresh = [], [], []
    for i in range(2000):
        k = i % 7
        if k < 3:
            w.append((i, "a"), callback=a)
            want_a.append(i)
        elif k < 5:
            w.append((i, "b"), callback=b)
            want_b.append(i)
        elif k == 5:
            w.append((i, "fresh"), callback=lambda c, i=i: fresh.append(i))  # a new callable each time
            want_fresh.append(i)
        else:
            w.append_detached((i, "detached"))
    w.flush()
    at = stored(engine, name, 2)
    assert sorted(at[(c.bucket, c.offset)] for c in a.items) == want_a
    assert sorted(at[(c.bucket, c.offset)] for c in b.items) == want_b
    assert sorted(fresh) == want_fresh
    w.close()


class CallableObject:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, c: fw.WriteCompletion) -> None:
        self.calls += 1


def test_the_shared_callable_is_released_once_its_operations_completed(conn, log_table) -> None:
    w = conn.get_table(log_table).new_append().create_writer()
    cb = CallableObject()
    ref = weakref.ref(cb)
    for i in range(100):
        w.append((i, "x"), callback=cb)
    w.flush()
    assert cb.calls == 100
    del cb
    gc.collect()
    assert ref() is None, "the writer still holds the callable after its operations completed"
    w.append((100, "x"), callback=CallableObject())  # a new callable after the old one died
    w.flush()
    w.close()


def test_primary_key_writes_share_callables(conn, engine) -> None:
    name = make_table(conn, [("id", "BIGINT", False), ("v", "STRING")], buckets=2, pk=["id"])
    w = conn.get_table(name).new_upsert().create_writer()
    rec = Recorder()
    for i in range(300):
        w.upsert((i, f"v{i}"), callback=rec)
    for i in range(100):
        w.delete((i,), rec)
    w.flush()
    assert len(rec.items) == 400
    assert all(c.ok and c.offset == -1 and c.log_end_offset >= 0 for c in rec.items)
    assert all(engine.lookup(name, (i,)) is None for i in range(100)), "deleted keys are gone"
    assert all(engine.lookup(name, (i,)) is not None for i in range(100, 300))
    w.close()


# ----- call forms and argument errors -----


def test_every_call_form_works(conn, log_table) -> None:
    w = conn.get_table(log_table).new_append().create_writer()
    rec = Recorder()
    assert w.append((0, "a")).wait().ok
    assert w.append(row=(1, "b")).wait().ok
    assert w.append((2, "c"), None).wait().ok
    assert w.append((3, "d"), callback=None).wait().ok
    assert w.append((4, "e"), rec) is None
    assert w.append((5, "f"), callback=rec) is None
    assert w.append(row=(6, "g"), callback=rec) is None
    assert w.append(callback=rec, row=(7, "h")) is None
    # A keyword name built at run time is not the interned "callback": matched by value.
    assert w.append((10, "k"), **{"".join(["call", "back"]): rec}) is None
    assert w.append((11, "l"), **{"".join(["call", "back"]): None}).wait().ok
    assert w.append_detached((8, "i")) is None
    assert w.append_detached(row=(9, "j")) is None
    w.flush()
    assert sorted(c.offset for c in rec.items) == [4, 5, 6, 7, 8], "one callback per record, at its offset"
    assert w.stats()["pending_callbacks"] == 0
    w.close()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda w: w.append(), "missing 1 required positional argument: 'row'"),
        (lambda w: w.append(callback=print), "missing 1 required positional argument: 'row'"),
        (lambda w: w.append((1, "x"), print, 3), "takes from 1 to 2 positional arguments but 3 were given"),
        (lambda w: w.append((1, "x"), cb=print), "got an unexpected keyword argument 'cb'"),
        (lambda w: w.append((1, "x"), row=(1, "x")), "got multiple values for argument 'row'"),
        (lambda w: w.append((1, "x"), print, callback=print), "got multiple values for argument 'callback'"),
        # "arguments" on 3.9, where pyo3's own argument parsing answers (no vectorcall path there)
        (lambda w: w.append_detached((1, "x"), print), "takes 1 positional arguments? but 2 were given"),
        (lambda w: w.append_detached((1, "x"), callback=print), "got an unexpected keyword argument 'callback'"),
        (lambda w: w.append((1, "x"), callback=42), "callback must be callable, not int"),
    ],
)
def test_argument_errors_raise_type_error_and_accept_nothing(conn, engine, log_table, call, message) -> None:
    w = conn.get_table(log_table).new_append().create_writer()
    w.append((0, "before"), callback=print)  # a cached callable must not hide a bad argument
    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(w)
    w.flush()
    assert [r[2][0] for r in engine.scan(log_table, 0)] == [0], "a failed call accepted nothing"
    w.close()


def test_upsert_and_delete_argument_errors(conn) -> None:
    name = make_table(conn, [("id", "BIGINT", False), ("v", "STRING")], pk=["id"])
    w = conn.get_table(name).new_upsert().create_writer()
    with pytest.raises(TypeError, match="UpsertWriter.upsert\\(\\) missing 1 required positional argument: 'row'"):
        w.upsert()
    with pytest.raises(TypeError, match="UpsertWriter.delete\\(\\) got an unexpected keyword argument 'row'"):
        w.delete(row=(1,))
    assert w.delete(key=(1,)).wait().ok
    assert w.upsert(row=(1, "v"), callback=None).wait().ok
    w.close()


def test_methods_keep_their_signatures_and_docs() -> None:
    for cls, meth, params in [
        (fw.AppendWriter, "append", ["self", "row", "callback"]),
        (fw.AppendWriter, "append_detached", ["self", "row"]),
        (fw.UpsertWriter, "upsert", ["self", "row", "callback"]),
        (fw.UpsertWriter, "delete", ["self", "key", "callback"]),
    ]:
        f = getattr(cls, meth)
        assert list(inspect.signature(f).parameters) == params
        assert f.__doc__ and len(f.__doc__) > 40
