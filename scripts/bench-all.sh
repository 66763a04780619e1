#!/usr/bin/env bash
# Run every benchmark of the repository, collect machine-readable results and render the plots.
#
#   scripts/bench-all.sh            # (what `make bench` runs)
#
# 1. builds the benchmarks (cargo profile `profiling`: the release code with line tables);
# 2. starts the Fluss cluster (scripts/fluss-cluster.sh) if Java is installed and it is not running
#    already; stops it at the end only if this script started it. Without Java, cluster cases are
#    skipped and only the embedded engine is measured;
# 3. runs bench/rust-peers (`peers`: fluss-writer vs fluss-rs 1.0.0; `micro`: dispatcher
#    micro-benchmarks), `cargo bench` e2e, dispatch and fifo_throughput, and bench/python/run.sh and
#    bench/cpp/run.sh when they exist (they get FLUSS_BOOTSTRAP_SERVERS and BENCH_RESULTS, the
#    results file; lines of their stdout that are JSON objects are added to it as well);
# 4. writes bench/results/<date>-<commit>.jsonl (one JSON object per line; logs beside it) and
#    renders bench/plots/*.png with matplotlib (installed into .venv-bench).
#
# Environment: BENCH_RECORDS (200000), BENCH_ROUNDS (5), BENCH_BACKLOG_SECS (8), CARGO_TARGET_DIR.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
export CARGO_TERM_PROGRESS_WHEN=never
CARGO="${CARGO:-cargo}"
RECORDS="${BENCH_RECORDS:-200000}"
ROUNDS="${BENCH_ROUNDS:-5}"
BACKLOG_SECS="${BENCH_BACKLOG_SECS:-8}"

COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo nocommit)"
DATE="$(date +%Y-%m-%d)"
mkdir -p bench/results bench/plots
OUT="bench/results/$DATE-$COMMIT.jsonl"
LOG="bench/results/$DATE-$COMMIT.log"
: >"$OUT"
: >"$LOG"
export BENCH_RESULTS="$REPO/$OUT"

say() { echo "[bench] $*" | tee -a "$LOG" >&2; }

# Python for the converters and plots.
VENV="$REPO/.venv-bench"
if [[ ! -x "$VENV/bin/python" ]]; then
  say "creating $VENV with matplotlib"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q matplotlib
fi
PY="$VENV/bin/python"

"$PY" - "$OUT" "$COMMIT" <<'EOF'
import json, os, platform, subprocess, sys, datetime
def sh(c):
    try: return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception: return ""
cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip()
mem = sh("awk '/MemTotal/ {printf \"%.1f GiB\", $2/1048576}' /proc/meminfo")
meta = {"bench": "meta", "date": datetime.datetime.now().isoformat(timespec="seconds"), "commit": sys.argv[2],
        "dirty": bool(sh("git status --porcelain --untracked-files=no")), "cpu": cpu, "nproc": os.cpu_count(), "mem": mem,
        "kernel": platform.release(), "rustc": sh("rustc --version"), "uptime": sh("uptime")}
open(sys.argv[1], "a").write(json.dumps(meta) + "\n")
EOF

say "building the benchmarks (profile profiling)"
"$CARGO" build --profile profiling -p fluss-writer-bench 2>&1 | tail -n 3 | tee -a "$LOG" >&2

# The cluster.
STARTED=0
BOOTSTRAP=""
if command -v java >/dev/null 2>&1 || [[ -n "${JAVA_HOME:-}" ]]; then
  if scripts/fluss-cluster.sh status >/dev/null 2>&1; then
    say "cluster already running: using it and leaving it running"
    BOOTSTRAP="127.0.0.1:${FLUSS_COORDINATOR_PORT:-9123}"
  else
    say "starting the cluster"
    line="$(scripts/fluss-cluster.sh start | tail -n 1)"
    BOOTSTRAP="${line#FLUSS_BOOTSTRAP_SERVERS=}"
    STARTED=1
  fi
else
  say "no Java: skipping the cluster cases"
fi
stop_cluster() { if [[ "$STARTED" == 1 ]]; then say "stopping the cluster this script started"; scripts/fluss-cluster.sh stop >/dev/null 2>&1 || true; fi; }
trap stop_cluster EXIT
CLUSTER_ARGS=(--no-cluster)
if [[ -n "$BOOTSTRAP" ]]; then
  CLUSTER_ARGS=(--bootstrap "$BOOTSTRAP")
  export FLUSS_BOOTSTRAP_SERVERS="$BOOTSTRAP"
fi

run() { say "$*"; "$@" 2>&1 | tee -a "$LOG"; }

say "load before: $(uptime)"
run "$CARGO_TARGET_DIR/profiling/peers" "${CLUSTER_ARGS[@]}" --records "$RECORDS" --rounds "$ROUNDS" --extra --json "$OUT"
run "$CARGO_TARGET_DIR/profiling/micro" "${CLUSTER_ARGS[@]}" --backlog-secs "$BACKLOG_SECS" --json "$OUT"

# cargo bench targets: their text output is converted to JSON lines.
convert() { # label-prefix, then stdin = bench output
  "$PY" -c '
import json, re, sys
out, prefix = sys.argv[1], sys.argv[2]
with open(out, "a") as f:
    for line in sys.stdin:
        line = line.rstrip("\n")
        r = None
        m = re.match(r"^(\w+)\s+median\s+([\d.]+) records/s\s+\(([\d.]+)x detached\)", line)
        if m:
            r = {"label": prefix + " " + m.group(1), "records_per_s": float(m.group(2)), "ratio_vs_detached": float(m.group(3))}
        m = re.search(r"median ([\d.]+) M callbacks/s \(([\d.]+) ns/callback\)", line)
        if m:
            r = {"label": prefix, "callbacks_per_s": float(m.group(1)) * 1e6, "ns_per_callback": float(m.group(2))}
        m = re.match(r"^fifo worker, (\d+) callbacks/job, (.*): ([\d.]+) M callbacks/s", line)
        if m:
            r = {"label": prefix + ", " + m.group(2), "callbacks_per_s": float(m.group(3)) * 1e6, "ns_per_callback": 1e3 / float(m.group(3))}
        if r:
            r.update({"bench": "cargo_bench", "line": line})
            f.write(json.dumps(r) + "\n")
' "$OUT" "$1"
}
bench() { # label, cargo args...
  local label="$1"; shift
  say "$CARGO bench $*"
  "$CARGO" bench "$@" 2>&1 | grep -v -E '^\s*(Compiling|Finished|Running|Blocking)' | tee -a "$LOG" | tee /dev/stderr | convert "$label"
}
bench "e2e embedded" -p fluss-writer --bench e2e || say "cargo bench e2e failed"
bench "cargo bench dispatch (full path)" -p fluss-writer --bench dispatch || say "cargo bench dispatch failed"
bench "fifo_throughput worker loop" -p fluss-writer-dispatch --bench fifo_throughput || say "cargo bench fifo_throughput failed"

# Bindings' benchmarks, when present.
for b in bench/python/run.sh bench/cpp/run.sh; do
  if [[ -x "$b" ]]; then
    say "$b"
    set +e
    "$b" 2>&1 | tee -a "$LOG" | tee /dev/stderr | grep -E '^\{' >>"$OUT"
    rc=${PIPESTATUS[0]}
    set -e
    [[ "$rc" == 0 ]] || say "$b exited with $rc"
  elif [[ -e "$b" ]]; then
    say "$b is not executable: skipped"
  else
    say "$b does not exist: skipped"
  fi
done

say "load after: $(uptime)"
"$PY" scripts/bench-plot.py "$OUT" bench/plots | tee -a "$LOG"
say "results: $OUT (log: $LOG), plots: bench/plots/"
