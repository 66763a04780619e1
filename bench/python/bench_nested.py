"""What nested columns cost from Python (issue 13): rows/s of an ARRAY<INT> of 10 elements (a
list) and of a ROW of 5 scalars (a tuple) against the same data flattened into scalar columns,
appended to a log table and upserted into a primary-key table on the embedded engine, side by
side in one run (rounds interleave the shapes; medians). Rows are built before the clock starts.

Usage: python bench_nested.py [--rows 200000] [--rounds 5]
Prints one JSON line per (mode, shape) and a summary table on stderr.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from typing import Any, Dict, List, Tuple

import fluss_writer as fw

FIVE = [("a", "INT"), ("b", "BIGINT"), ("c", "DOUBLE"), ("d", "STRING"), ("e", "BOOLEAN")]
SHAPES: Dict[str, List[Tuple[str, str]]] = {
    "array10": [("a", "ARRAY<INT>")],
    "flat10": [(f"a{k}", "INT") for k in range(10)],
    "row5": [("r", "ROW<a INT, b BIGINT, c DOUBLE, d STRING, e BOOLEAN>")],
    "flat5": FIVE,
}


def rows(shape: str, n: int) -> List[Tuple[Any, ...]]:
    def five(i: int) -> Tuple[Any, ...]:
        return (i, i * 7, i / 3, f"name-{i % 1000}", i % 2 == 0)

    if shape == "array10":
        return [(i, [i * 31 + k for k in range(10)]) for i in range(n)]
    if shape == "flat10":
        return [(i, *[i * 31 + k for k in range(10)]) for i in range(n)]
    if shape == "row5":
        return [(i, five(i)) for i in range(n)]
    return [(i, *five(i)) for i in range(n)]


def run(conn: fw.Connection, shape: str, pk: bool, data: List[Tuple[Any, ...]]) -> float:
    columns = [("id", "BIGINT", False), *SHAPES[shape]]
    schema = fw.Schema(columns, primary_keys=["id"] if pk else None)
    name = f"fluss.nested_{shape}_{uuid.uuid4().hex[:8]}"
    conn.admin().create_table(name, fw.TableDescriptor(schema, bucket_count=4))
    table = conn.get_table(name)
    start = time.perf_counter()
    if pk:
        with table.new_upsert().create_writer() as w:
            for r in data:
                w.upsert_detached(r)
            w.flush()
    else:
        with table.new_append().create_writer() as w:
            for r in data:
                w.append_detached(r)
            w.flush()
    rate = len(data) / (time.perf_counter() - start)
    conn.admin().drop_table(name)
    return rate


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    conn = fw.connect("embedded")
    data = {s: rows(s, args.rows) for s in SHAPES}
    results: Dict[Tuple[str, str], List[float]] = {}
    for _ in range(args.rounds):
        for shape in SHAPES:
            for mode in ("log", "pk"):
                results.setdefault((mode, shape), []).append(run(conn, shape, mode == "pk", data[shape]))
    med = {k: statistics.median(v) for k, v in results.items()}
    for (mode, shape), v in results.items():
        print(
            json.dumps(
                {
                    "bench": "python-nested",
                    "mode": mode,
                    "shape": shape,
                    "rows": args.rows,
                    "median_rows_per_s": med[(mode, shape)],
                    "runs": v,
                }
            )
        )
    print(f"nested vs flat from Python: {args.rows} rows per run, {args.rounds} rounds, medians (rows/s)", file=sys.stderr)
    for mode in ("log", "pk"):
        for nested, flat in (("array10", "flat10"), ("row5", "flat5")):
            a, b = med[(mode, nested)], med[(mode, flat)]
            print(f"{mode:<4} {nested:<8} {a:>10.0f}   {flat:<7} {b:>10.0f}   nested/flat {a / b:.2f}x", file=sys.stderr)


if __name__ == "__main__":
    main()
