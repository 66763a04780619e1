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
#    renders bench/plots/*.png with matplotlib (installed into .venv-bench);
# 5. when FLUSS_REPLICATED_BOOTSTRAP_SERVERS is set (a cluster of 3 tablet servers, e.g. the one
#    `make test` starts; this script never starts one) and FLUSS_REPLICATED_CLUSTER_ENV holds the
#    KEY=VALUE words that address it for scripts/fluss-cluster.sh: the replicated cases into
#    bench/results/<date>-<commit>-replicated.jsonl (log beside it): `peers` (Rust) and
#    bench_cluster.py (Python) on RF 3 / acks all tables, and `dip` (throughput around a SIGKILL of
#    a leader; every tablet server it killed is started again, and this script starts them all
#    again at exit in any case), then bench/plots/replicated_peers.png and bench/plots/dip.png.
#
# Environment: BENCH_RECORDS (200000), BENCH_ROUNDS (5), BENCH_BACKLOG_SECS (8), CARGO_TARGET_DIR;
# for the replicated cases BENCH_REPLICATED_ROUNDS (7), BENCH_REPLICATED_RECORDS (200000; Python:
# BENCH_REPLICATED_PY_RECORDS, 100000; BENCH_REPLICATED_PY_TIMEOUT, 900 s), BENCH_DIP_RUNS (2), BENCH_ONLY_REPLICATED=1 (skip everything
# else).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
export CARGO_TARGET_DIR="$("$REPO/scripts/cargo-target-dir.sh")"
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
ROUT="bench/results/$DATE-$COMMIT-replicated.jsonl"
RLOG="bench/results/$DATE-$COMMIT-replicated.log"
if [[ -n "${BENCH_ONLY_REPLICATED:-}" ]]; then OUT="$ROUT"; LOG="$RLOG"; fi
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
# The benchmark binaries, copied out of the (possibly shared) target directory so that another
# checkout's build cannot replace them during the run.
BIN="$(mktemp -d "${TMPDIR:-/tmp}/bench-bin.XXXXXX")"
cp "$CARGO_TARGET_DIR"/profiling/{peers,micro,dip} "$BIN"/

# The cluster.
STARTED=0
BOOTSTRAP=""
ONLY_REPLICATED="${BENCH_ONLY_REPLICATED:-}"
if [[ -n "$ONLY_REPLICATED" ]]; then
  say "BENCH_ONLY_REPLICATED set: only the replicated cases"
elif [[ -n "${FLUSS_BOOTSTRAP_SERVERS:-}" ]] && "$PY" scripts/fluss_probe.py -b "$FLUSS_BOOTSTRAP_SERVERS" --timeout 5 >/dev/null 2>&1; then
  # A cluster run from another checkout (its run directory is not this one's).
  say "cluster at FLUSS_BOOTSTRAP_SERVERS=$FLUSS_BOOTSTRAP_SERVERS answers: using it and leaving it running"
  BOOTSTRAP="$FLUSS_BOOTSTRAP_SERVERS"
elif command -v java >/dev/null 2>&1 || [[ -n "${JAVA_HOME:-}" ]]; then
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

# The replicated cases (step 5 above).
replicated() {
  if [[ -z "${FLUSS_REPLICATED_BOOTSTRAP_SERVERS:-}" ]]; then
    say "FLUSS_REPLICATED_BOOTSTRAP_SERVERS not set: replicated cases skipped (this script does not start a replicated cluster; make test or scripts/README.md does)"
    return 0
  fi
  if [[ -z "${FLUSS_REPLICATED_CLUSTER_ENV:-}" ]]; then
    say "FLUSS_REPLICATED_CLUSTER_ENV not set (the KEY=VALUE words of scripts/fluss-cluster.sh for that cluster): replicated cases skipped"
    return 0
  fi
  local rout="$ROUT" rlog="$RLOG"
  local rounds="${BENCH_REPLICATED_ROUNDS:-7}" records="${BENCH_REPLICATED_RECORDS:-200000}"
  # Global (not local): the EXIT trap below uses it after this function returned.
  # shellcheck disable=SC2206  # the KEY=VALUE words, split on purpose
  cl=(env $FLUSS_REPLICATED_CLUSTER_ENV scripts/fluss-cluster.sh)
  local logs=("$LOG")
  if [[ "$rout" != "$OUT" ]]; then : >"$rout"; : >"$rlog"; logs+=("$rlog"); fi
  rsay() { echo "[bench] $*" | tee -a "${logs[@]}" >&2; }
  rrun() { rsay "$*"; "$@" 2>&1 | tee -a "${logs[@]}"; }
  # Whatever happens, every tablet server of the replicated cluster runs again at exit.
  restore_tablets() {
    local n i
    n="$(sed -n 's/.*FLUSS_TABLETS=\([0-9]*\).*/\1/p' <<<"$FLUSS_REPLICATED_CLUSTER_ENV")"
    for ((i = 0; i < ${n:-3}; i++)); do "${cl[@]}" start-tablet "$i" >/dev/null 2>&1 || rsay "start-tablet $i failed"; done
  }
  trap 'restore_tablets; stop_cluster' EXIT
  if ! "${cl[@]}" status >>"$rlog" 2>&1; then
    rsay "the replicated cluster at $FLUSS_REPLICATED_BOOTSTRAP_SERVERS is not all up (status): replicated cases skipped"
    return 0
  fi
  rsay "replicated cluster $FLUSS_REPLICATED_BOOTSTRAP_SERVERS: all servers run; load: $(uptime)"
  # 1 KiB rows with a quarter of the records: with 3 replicas every run writes 3x its bytes to the
  # (shared) disk; the tables are dropped after each case.
  rrun "$BIN/peers" --bootstrap "$FLUSS_REPLICATED_BOOTSTRAP_SERVERS" --no-embedded --replication-factor 3 --acks all \
    --compression NONE --rows 100 --records "$records" --rounds "$rounds" --json "$rout" || rsay "peers (replicated, 100 B) failed"
  rrun "$BIN/peers" --bootstrap "$FLUSS_REPLICATED_BOOTSTRAP_SERVERS" --no-embedded --replication-factor 3 --acks all \
    --compression NONE --rows 1024 --records "$((records / 4))" --rounds "$rounds" --json "$rout" || rsay "peers (replicated, 1 KiB) failed"
  rsay "load: $(uptime)"
  local pyv="${BENCH_PY_VENV:-$REPO/.venv-bench-py}"
  if [[ -x "$pyv/bin/python" ]] && "$pyv/bin/python" -c "import fluss, fluss_writer" 2>/dev/null; then
    rsay "python bench_cluster.py (replicated)"
    # Bounded, so that a hang (such as the flush deadlock fixed in e707b50) cannot stall the whole run.
    (cd bench/python && timeout "${BENCH_REPLICATED_PY_TIMEOUT:-900}" "$pyv/bin/python" bench_cluster.py --bootstrap "$FLUSS_REPLICATED_BOOTSTRAP_SERVERS" \
      --replication-factor 3 --acks all --modes fw/callback,pyfluss/handles --skip-dispatch \
      --records "${BENCH_REPLICATED_PY_RECORDS:-100000}" --rounds "$rounds") 2> >(tee -a "${logs[@]}" >&2) | grep -E '^\{' >>"$rout" || rsay "bench_cluster.py (replicated) failed"
  else
    rsay "no $pyv with fluss_writer and pyfluss (bench/python/run.sh builds it): Python replicated cases skipped"
  fi
  rsay "load: $(uptime)"
  local series=() i
  for ((i = 1; i <= ${BENCH_DIP_RUNS:-2}; i++)); do
    "${cl[@]}" status >/dev/null 2>&1 || { rsay "replicated cluster not all up before dip run $i: skipped"; continue; }
    local s="bench/results/$DATE-$COMMIT-dip-$i.jsonl"
    # About 35 s at full speed: some GB written 3 times, dropped at the end.
    rrun "$BIN/dip" --bootstrap "$FLUSS_REPLICATED_BOOTSTRAP_SERVERS" --label "dip-$i" --before-secs 8 --down-secs 12 \
      --after-secs 15 --series "$s" --json "$rout" && series+=("$s")
    rsay "load: $(uptime)"
  done
  "$PY" bench/python/plot_replicated.py "$rout" bench/plots "${series[@]}" 2>&1 | tee -a "${logs[@]}"
  rsay "replicated results: $rout (log: $rlog)"
}

if [[ -n "$ONLY_REPLICATED" ]]; then
  # The Python cases need the release wheel and pyfluss in .venv-bench-py (run.sh builds them).
  if [[ -x bench/python/run.sh ]]; then
    BENCH_PY_BUILD_ONLY=1 bench/python/run.sh 2>&1 | tee -a "$LOG" >&2 || say "bench/python/run.sh (build only) failed"
  fi
  replicated
  exit 0
fi

say "load before: $(uptime)"
run "$BIN/peers" "${CLUSTER_ARGS[@]}" --records "$RECORDS" --rounds "$ROUNDS" --extra --json "$OUT"
run "$BIN/micro" "${CLUSTER_ARGS[@]}" --backlog-secs "$BACKLOG_SECS" --json "$OUT"

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

replicated

say "load after: $(uptime)"
"$PY" scripts/bench-plot.py "$OUT" bench/plots | tee -a "$LOG"
say "results: $OUT (log: $LOG), plots: bench/plots/"
