#!/usr/bin/env python3
"""The end of a `make test` run: the slowest 10 tests of each suite, and every retry a test noted.

Reads what scripts/test-all.sh leaves in its log directory (build-logs/):
  rust.log          `cargo test --workspace` through scripts/test-runner.sh: libtest's
                    `test NAME ... ok <1.234s>` lines, under each `Running <target>` line;
  rust-cluster.log  the same for the Rust test targets that mostly wait on the clusters, run
                    beside the rest of the workspace's tests;
  rust-failover.log the same for tests/cluster_failover.rs, run in the background;
  rust-fluss10.log  the same for the Rust cluster tests run against the Fluss 1.0-line server;
  rust-interop.log  the same for the Java interop tests (tests-interop/run.sh);
  pytest-*.xml      JUnit reports of the Python suite, one per interpreter, and the golden
                    scenarios against Fluss 1.0 (pytest-fluss10.xml) (tests-py/run.sh);
  ctest-*.xml       JUnit reports of the C++ suite, one per build (tests-cpp/run.sh);
  retries.log       one line per retry a test made (a table the coordinator missed, a leader
                    move that did not happen), written by the tests' helpers in each language.
Usage: scripts/test-summary.py [LOG_DIR]  (default build-logs). Exits 0; prints nothing for what
is missing.
"""

from __future__ import annotations

import os
import re
import sys
import xml.etree.ElementTree as ET
from typing import List, Tuple

TOP = 10


def rust_times(path: str) -> List[Tuple[float, str]]:
    out: List[Tuple[float, str]] = []
    target = "?"
    running = re.compile(r"^\s*Running (\S+)")
    line_re = re.compile(r"^test (.+?) \.\.\. (ok|FAILED|ignored)\s*<([0-9.]+)s>")
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = running.match(line)
            if m:
                target = m.group(1)
                continue
            m = line_re.match(line)
            if m:
                out.append((float(m.group(3)), f"{target}: {m.group(1)}"))
    return out


def junit_times(path: str) -> List[Tuple[float, str]]:
    out: List[Tuple[float, str]] = []
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return out
    for case in root.iter("testcase"):
        try:
            t = float(case.get("time", "0") or 0)
        except ValueError:
            continue
        cls = case.get("classname", "")
        name = case.get("name", "?")
        out.append((t, f"{cls}::{name}" if cls and cls != name else name))
    return out


def print_top(title: str, times: List[Tuple[float, str]]) -> None:
    if not times:
        return
    times.sort(key=lambda x: -x[0])
    total = sum(t for t, _ in times)
    print(f"\n--- slowest {min(TOP, len(times))} of {len(times)} tests: {title} (sum {total:.0f} s) ---")
    for t, name in times[:TOP]:
        print(f"{t:8.1f} s  {name}")


def main() -> int:
    logs = sys.argv[1] if len(sys.argv) > 1 else "build-logs"
    if not os.path.isdir(logs):
        return 0
    print("\n===== test summary =====")
    for log, title in (("rust.log", "Rust workspace (cargo test)"), ("rust-cluster.log", "Rust cluster test targets (beside the workspace run)"),
        ("rust-failover.log", "Rust failover tests (background)"),
        ("rust-interop.log", "Rust interop tests (Java oracles)"),
        ("rust-fluss10.log", "Rust cluster tests against Fluss 1.0"),):
        if os.path.exists(os.path.join(logs, log)):
            print_top(title, rust_times(os.path.join(logs, log)))
    for name in sorted(os.listdir(logs)):
        if name.startswith("pytest-") and name.endswith(".xml"):
            print_top(f"Python suite, {name[len('pytest-'):-4]}", junit_times(os.path.join(logs, name)))
        elif name.startswith("ctest-") and name.endswith(".xml"):
            print_top(f"C++ suite, {name[len('ctest-'):-4]} build", junit_times(os.path.join(logs, name)))
    retries = os.path.join(logs, "retries.log")
    lines: List[str] = []
    if os.path.exists(retries):
        with open(retries, encoding="utf-8", errors="replace") as f:
            lines = [line.rstrip("\n") for line in f if line.strip()]
    if lines:
        print(f"\nNOTE: {len(lines)} retr{'y' if len(lines) == 1 else 'ies'} made by tests (they passed only after trying again):")
        for line in lines:
            print(f"  {line}")
    else:
        print("\nNo test noted a retry.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
