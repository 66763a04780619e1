#!/usr/bin/env python3
"""Runs a program that talks to a test cluster (an example, a documentation block), and runs it
again while it fails because the cluster's coordinator is restarting.

    scripts/run-on-cluster.py --bootstrap HOST:PORT --name TEST [--lang c++] -- PROGRAM [ARGS...]

`scripts/fluss-cluster.sh heal-watch` restarts a Fluss 0.9.1 coordinator that lost a table (see
that script); for the few seconds of a restart it refuses connections, then answers "...is not
initialized yet". A program started in that window fails at its first call, through no fault of
its own. The tests of this project wait for such a restart where they call the cluster themselves
(tests-py/cluster/support.py, tests-cpp/test_util.h), for up to 60 s; programs run whole get the
same treatment here: while the program exits non-zero and its output shows one of those two
failures, the retry is noted (a line of $FLUSS_TEST_LOGS/retries.log, which the summary of
`make test` lists) and the program runs again a second later, for up to 60 s. Any other failure
is the exit status at once. The programs are written to be run again (their tables are created
with ignore-if-exists).

The last run's output is passed through (stdout to stdout, stderr to stderr); the output of a run
that is retried goes to stderr, after a line that says so.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

#: How a call fails while the coordinator restarts: refused (the client's NETWORK_EXCEPTION, code
#: 1, "cannot connect"), then the 0.9.1 coordinator's answer while it starts.
SIGNS = ("NETWORK_EXCEPTION (1)", "is not initialized yet")
WAIT_S = 60


def run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace")


def show(p: subprocess.CompletedProcess[str], retried: bool) -> None:
    if retried:
        sys.stderr.write(f"----- run-on-cluster.py: the output of the run that is retried (exit status {p.returncode}):\n")
        sys.stderr.write(p.stdout)
    else:
        sys.stdout.write(p.stdout)
        sys.stdout.flush()
    sys.stderr.write(p.stderr)
    sys.stderr.flush()


def note_retry(lang: str, name: str, what: str) -> None:
    print(what, file=sys.stderr)
    logs = os.environ.get("FLUSS_TEST_LOGS")
    if logs:
        with open(os.path.join(logs, "retries.log"), "a", encoding="utf-8") as f:
            f.write(f"{lang} {name}: {what}\n")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bootstrap", required=True, help="the cluster's coordinator HOST:PORT (the first of a list)")
    p.add_argument("--name", required=True, help="the test's name, for the retry note")
    p.add_argument("--lang", default="c++", help="the suite, for the retry note (c++, python)")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- PROGRAM [ARGS...]")
    a = p.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        p.error("no program given (after --)")
    address = a.bootstrap.split(",")[0]
    deadline = time.monotonic() + WAIT_S
    while True:
        r = run(cmd)
        out = r.stdout + r.stderr
        sign = next((s for s in SIGNS if s in out), None) if r.returncode != 0 else None
        if sign is None or time.monotonic() > deadline:
            show(r, retried=False)
            return r.returncode
        show(r, retried=True)
        line = next(ln for ln in out.splitlines() if sign in ln).strip()
        note_retry(a.lang, a.name, f"exited {r.returncode} with '{line[:300]}'; running it again: the coordinator at "
                   f"{address} may be restarting")
        time.sleep(1.0)


if __name__ == "__main__":
    sys.exit(main())
