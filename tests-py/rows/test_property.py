"""Property: a random row of random Python values against a random schema is either accepted
and read back identical (through the embedded engine: scan for log tables, lookup for
primary-key tables), or rejected synchronously with a FlussWriterError subclass whose message
names a column; never another exception type, never a panic (InternalError), and a rejected row
is never written (issue 11, "Also")."""

from __future__ import annotations

import datetime as dt
import itertools
import math
import re
import struct
from decimal import Decimal
from typing import Any, Callable, Dict, List, Tuple

import fluss_writer as fw
import pytest
from fluss_writer import testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.timeout(120)

_ids = itertools.count()

UTC = dt.timezone.utc
offsets = st.integers(-23 * 60 - 59, 23 * 60 + 59).map(lambda m: dt.timezone(dt.timedelta(minutes=m)))
# Years 2..9998: a TIMESTAMP_LTZ is read back in UTC, which must stay a Python datetime.
naive = st.datetimes(min_value=dt.datetime(2, 1, 1), max_value=dt.datetime(9998, 12, 31))
aware = st.builds(lambda d, tz: d.replace(tzinfo=tz), naive, offsets)
surrogates = st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3)
texts = st.one_of(st.text(max_size=20), st.builds(lambda a, b: a + b, st.text(max_size=5), surrogates))
ints = st.one_of(
    st.integers(-(2**7), 2**7),
    st.integers(-(2**63) - 2, 2**63 + 2),
    st.integers(-(10**40), 10**40),
    st.sampled_from([10**400, -(10**400), 2**64, -(2**127), 2**127]),
)
floats = st.floats(allow_nan=True, allow_infinity=True)
decimals = st.one_of(
    st.decimals(allow_nan=True, allow_infinity=True),
    st.decimals(min_value=-(10**6), max_value=10**6, places=3),
    st.builds(lambda m, e: Decimal(m).scaleb(e), st.integers(-(10**20), 10**20), st.integers(-40, 40)),
    # Exponents beyond 32 bits (one that wraps to a small one must not be taken for it).
    st.sampled_from([Decimal("1E+4294967297"), Decimal("1E-4294967297"), Decimal("-0E+999999"), Decimal("1E+38")]),
)

TYPES: Dict[str, st.SearchStrategy[Any]] = {
    "BOOLEAN": st.booleans(),
    "TINYINT": ints,
    "SMALLINT": ints,
    "INT": ints,
    "BIGINT": ints,
    "FLOAT": st.one_of(floats, ints),
    "DOUBLE": st.one_of(floats, ints),
    "STRING": texts,
    "BYTES": st.one_of(st.binary(max_size=20), st.binary(max_size=5).map(bytearray)),
    "DECIMAL(1, 0)": st.one_of(decimals, ints),
    "DECIMAL(10, 3)": st.one_of(decimals, ints),
    "DECIMAL(38, 10)": st.one_of(decimals, ints),
    "DATE": st.dates(),
    "TIME(0)": st.times(),
    "TIME(2)": st.times(),
    "TIME(3)": st.times(),
    "TIMESTAMP(0)": naive,
    "TIMESTAMP(1)": naive,
    "TIMESTAMP(3)": naive,
    "TIMESTAMP(6)": naive,
    "TIMESTAMP(9)": naive,
    "TIMESTAMP_LTZ(0)": aware,
    "TIMESTAMP_LTZ(3)": aware,
    "TIMESTAMP_LTZ(6)": aware,
}
# Values at the edges of what each conversion handles, drawn often for every column.
EDGES = st.sampled_from(
    [
        10**400, -(10**400), 2**63, -(2**63) - 1, 2**64, float("nan"), float("inf"), -0.0, 3.5e38, 1e-320,
        Decimal("1E+4294967297"), Decimal("1E-4294967297"), Decimal("NaN"), Decimal("-Infinity"), Decimal("9" * 39),
        "\udcff", "a\ud800b", "", b"", True, dt.date.max, dt.datetime.min, dt.time.max,
    ]
)
ANYTHING = st.one_of(
    st.none(),
    *TYPES.values(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
    aware,
    naive.map(lambda d: d.date()),
)


@st.composite
def cases(draw: Callable[..., Any]) -> Tuple[List[Tuple[str, str, bool]], bool, List[Any], str]:
    n = draw(st.integers(1, 5))
    types = [draw(st.sampled_from(sorted(TYPES))) for _ in range(n)]
    cols = [(f"c{i}_{t.split('(')[0].lower()}", t, draw(st.booleans())) for i, t in enumerate(types)]
    pk = draw(st.booleans())
    if pk:  # a BIGINT key first; every other column random
        cols = [("k", "BIGINT", False)] + cols
    values = [draw(st.one_of(TYPES[t], EDGES, ANYTHING)) for _, t, _ in cols[pk:]]
    if pk:
        values = [draw(st.integers(0, 2**40))] + values
    shape = draw(st.sampled_from(["dict", "tuple", "list"]))
    return cols, pk, values, shape


def _param(t: str) -> int:
    m = re.search(r"\((\d+)", t)
    return int(m.group(1)) if m else 0


def _unit_micros(precision: int, pk: bool) -> int:
    if pk:  # the KV (compacted row) encoding: milliseconds up to precision 3
        return 1000 if precision <= 3 else 1
    return 1_000_000 if precision == 0 else 1000 if precision <= 3 else 1


def expected(t: str, v: Any, pk: bool) -> Any:
    """What an accepted value reads back as."""
    if v is None:
        return None
    base = t.split("(")[0]
    if base == "FLOAT":
        return struct.unpack("f", struct.pack("f", v))[0] if math.isfinite(v) else float(v)
    if base == "DOUBLE":
        return float(v)
    if base == "BYTES":
        return bytes(v)
    if base == "DECIMAL":
        return Decimal(v)
    # Fractional seconds are kept in the unit of the column's encoding (as Fluss does): for log
    # tables the Arrow unit (seconds for precision 0, milliseconds for 1-3, microseconds,
    # Python's limit, above); for primary-key tables the compacted row (milliseconds up to
    # precision 3). TIME is stored in milliseconds at most.
    if base == "TIME":
        q = _unit_micros(min(_param(t), 3), pk)
        return v.replace(microsecond=v.microsecond // q * q, tzinfo=None)
    if base in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        q = _unit_micros(_param(t), pk)
        v = v.replace(microsecond=v.microsecond // q * q)
        return v.astimezone(UTC) if base == "TIMESTAMP_LTZ" else v
    return v


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b or (isinstance(a, Decimal) and isinstance(b, Decimal) and a == b)


_conn: Dict[str, Any] = {}


def connection() -> fw.Connection:
    if "c" not in _conn:
        _conn["c"] = fw.connect("embedded", {"client.writer.batch-timeout": "1ms"})
    return _conn["c"]


@pytest.fixture(scope="module", autouse=True)
def _close_connection():
    yield
    if "c" in _conn:
        _conn.pop("c").close(10)


@settings(
    max_examples=200,
    deadline=None,
    database=None,  # no .hypothesis directory in the checkout; every run starts fresh
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(cases())
def test_a_random_row_is_written_exactly_or_rejected_naming_a_column(case) -> None:
    cols, pk, values, shape = case
    conn = connection()
    name = f"fluss.p{next(_ids)}"
    conn.admin().create_table(
        name, fw.TableDescriptor(fw.Schema(cols, primary_keys=["k"] if pk else None), bucket_count=1)
    )
    t = conn.get_table(name)
    w = t.new_upsert().create_writer() if pk else t.new_append().create_writer()
    names = [c[0] for c in cols]
    row: Any = dict(zip(names, values)) if shape == "dict" else tuple(values) if shape == "tuple" else list(values)
    write = w.upsert if pk else w.append
    try:
        c = write(row).wait(10)
    except fw.FlussWriterError as e:
        assert not isinstance(e, fw.InternalError), e
        assert any(f'"{n}"' in str(e) for n in names), f"{type(e).__name__} names no column: {e}"
        w.flush(10)
        assert testing.engine(conn).high_watermark(name, 0) == 0
        return
    finally:
        w.close(10)
    assert c.ok, c.error
    if pk:
        got = t.lookup([values[0]])
        assert got is not None
    else:
        (got,) = [r[2] for r in testing.engine(conn).scan(name, 0)]
    want = tuple(expected(ty, v, pk) for (_, ty, _), v in zip(cols, values))
    for n, a, b in zip(names, got, want):
        assert same(a, b), f"column {n}: wrote {b!r}, read back {a!r}"
