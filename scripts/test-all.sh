#!/usr/bin/env bash
# Runs every test suite: formatting and lints, the Rust workspace (unit, property, integration
# and golden tests, and the replay of the fuzz targets' committed inputs), the loom models of the
# dispatcher, the Python suite (against the shipped wheel, on the newest and the oldest CPython)
# and the C++ suite (normal and sanitizer builds, and the shipped static and shared packages).
# The documentation site is built strictly (`make docs`), and every code block of the README and
# the guides runs (the Python suite runs the Python blocks, the C++ suite the C++ blocks, the Rust
# doctests the Rust block).
# TEST_PARTS (default: all of them) runs a subset, in this order: lint docs rust interop fluss10
# loom py cpp alone (`make test-rust` = "lint rust loom", `make test-py` = "py", `make test-cpp` = "cpp").
# Builds go to the shared cargo cache outside the clone (scripts/cargo-target-dir.sh). Each suite's
# log and timings go to build-logs/; the end of the run prints the slowest 10 tests of each suite,
# every retry a test reported, and every heal-watch restart (scripts/test-summary.py). A real Fluss 0.9.1 cluster is started first when Java is
# available (always under CI=true, where failing to start it fails the run) and its address is
# exported as FLUSS_BOOTSTRAP_SERVERS for the network tests of every language.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
export CARGO_TARGET_DIR="$("$REPO/scripts/cargo-target-dir.sh")"
export PATH="$HOME/.cargo/bin:$PATH"

ALL_PARTS="lint docs rust interop fluss10 loom py cpp alone"
TEST_PARTS="${TEST_PARTS:-$ALL_PARTS}"
part() { [[ " $TEST_PARTS " == *" $1 "* ]]; }
LOGS="$REPO/build-logs"
rm -rf "$LOGS"
mkdir -p "$LOGS"
export FLUSS_TEST_LOGS="$LOGS"

# Each step says how long the run has taken so far (the cold-start budget is 30 minutes).
# And how much disk and memory is left: a full disk or memory pressure stalls and then kills the
# Fluss servers of every cluster at once, which the failing tests only show as timeouts.
# How busy the CPUs were since the previous step line (from /proc/stat: all CPUs, the clusters'
# servers included): a step near 100% is bound by the CPU, and a faster machine or less work
# shortens it; one far below waits on something else (servers, timeouts, a lock).
cpu_busy() {  # sets CPU_NOTE and CPU_MARK
  local now busy total b0 t0
  CPU_NOTE=""
  now="$(awk '/^cpu / {t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t}' /proc/stat 2>/dev/null || true)"
  if [ -n "${CPU_MARK:-}" ] && [ -n "$now" ]; then
    read -r busy total <<<"$now"
    read -r b0 t0 <<<"$CPU_MARK"
    if [ "$total" -gt "$t0" ]; then CPU_NOTE="; CPUs $((100 * (busy - b0) / (total - t0)))% busy since the last step"; fi
  fi
  CPU_MARK="$now"
}
step() {
  cpu_busy
  printf '\n=== %s === (%d:%02d elapsed; disk free %s, memory available %s%s)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)) \
    "$(df -h --output=avail "$REPO" 2>/dev/null | tail -n 1 | tr -d ' ')" "$(free -h 2>/dev/null | awk '/^Mem:/ {print $7}')" "$CPU_NOTE"
}
# A one-shot build gains nothing from incremental compilation, which costs gigabytes of disk.
if [ "${CI:-}" = true ] || [ "${CI:-}" = 1 ]; then export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"; fi

step "toolchain (cargo target directory: $CARGO_TARGET_DIR; parts: $TEST_PARTS)"
command -v cargo >/dev/null || { echo "cargo not found: install Rust (rustup) first" >&2; exit 1; }
cargo --version
rustup component add rustfmt clippy >/dev/null 2>&1 || true

if part lint; then
  step "one version (Cargo.toml) for the crates, the wheel and the C++ package"
  scripts/check-version.sh

  step "rustfmt and clippy"
  cargo fmt --all -- --check
  cargo clippy --workspace --all-targets -- -D warnings
  # And the code behind the bindings' cargo features for our own tests and benchmarks (rust/py:
  # bench, test-hooks; rust/cxx: test-hooks), which the line above (release-like builds) skips.
  cargo clippy --workspace --all-targets --all-features -- -D warnings
fi

if part docs; then
  step "documentation site (make docs: rustdoc, Doxygen, MkDocs, all strict)"
  scripts/docs.sh
fi

cluster_started=0
sasl_started=0
# The SASL cluster (client listener SASL/PLAIN, authorizer on) runs beside the plaintext one.
sasl_env=(FLUSS_SASL=1 "FLUSS_RUN_DIR=$REPO/.fluss/run-sasl" FLUSS_COORDINATOR_PORT=9223 FLUSS_TABLET_PORT=9224 FLUSS_ZK_PORT=2281)
# The replicated cluster (3 tablet servers, replication factor 3) for the failover tests, whose
# servers they kill. A short ZooKeeper session and replica lag make a crashed server's buckets
# move within seconds instead of Fluss's defaults (60 s, 30 s).
replicated_started=0
replicated_env=(FLUSS_TABLETS=3 "FLUSS_RUN_DIR=$REPO/.fluss/run-replicated" FLUSS_COORDINATOR_PORT=9323 FLUSS_TABLET_PORT=9324
  FLUSS_ZK_PORT=2381)
replicated_conf=$'zookeeper.client.session-timeout: 6s\nlog.replica.max-lag-time: 5s'
# A second replicated cluster, of the Rust failover tests alone (rust/core/tests/cluster_failover.rs,
# six minutes of a run): they run in the background, beside the other steps, from the Rust step
# to the end of the run; the Python and C++ failover tests use the first one. TEST_SERIAL=1 runs
# them inside the Rust step on the first one instead.
failover_started=0
failover_env=(FLUSS_TABLETS=3 "FLUSS_RUN_DIR=$REPO/.fluss/run-failover" FLUSS_COORDINATOR_PORT=9623 FLUSS_TABLET_PORT=9624
  FLUSS_ZK_PORT=2681)
failover_pid=""
# One heal-watch per cluster started here: it restarts a coordinator that Fluss 0.9.1's lost-table
# bug left unable to assign leaders (docs/architecture.md, "Known server issues") or that exited,
# and appends each restart to .fluss/<run dir>.heals, which the end of the run reports.
# The cluster with a Paimon data lake (FLUSS_LAKE=paimon: the lake plugin and a filesystem
# warehouse), started for the interoperability step only and stopped after it.
lake_started=0
lake_env=(FLUSS_LAKE=paimon "FLUSS_RUN_DIR=$REPO/.fluss/run-lake" FLUSS_COORDINATOR_PORT=9523 FLUSS_TABLET_PORT=9524
  FLUSS_ZK_PORT=2481)
# A Fluss 1.0-line server (scripts/fluss-1.0-server.sh: the 1.0.0 release when Maven Central serves
# it, else the 1.0-SNAPSHOT built from ../shared/fluss-1.0-snapshot), one tablet server. The
# cluster tests named in the fluss10 part, the golden cluster scenarios of all three languages
# and the pyfluss interop run against it as well as against 0.9.1. No heal-watch: the bug it
# heals is 0.9.1's.
fluss10_started=0
# Its disk-usage guard is off: Fluss 1.0 refuses every write (DISK_WRITE_LOCKED, 70) above 85 %
# of the data disk by default, and the filesystems of these machines count as fuller than that
# (a 1.0-SNAPSHOT server measured 85.6 % with a third of the disk free).
fluss10_env=("FLUSS_RUN_DIR=$REPO/.fluss/run-1.0" FLUSS_COORDINATOR_PORT=9423 FLUSS_TABLET_PORT=9424 FLUSS_ZK_PORT=2581
  "FLUSS_EXTRA_CONF=server.data-disk.write-limit-ratio: 1.0")
# A second 1.0-line server with tiny storage back-pressure thresholds (one L0 file slows writes
# down, 64 KiB write buffers), for rust/core/tests/kv_backpressure.rs: at the defaults a test
# load shows no pressure, and these thresholds would refuse the other tests' big batches.
pressure_started=0
pressure_env=("FLUSS_RUN_DIR=$REPO/.fluss/run-pressure" FLUSS_COORDINATOR_PORT=9823 FLUSS_TABLET_PORT=9824 FLUSS_ZK_PORT=2881
  "FLUSS_EXTRA_CONF=kv.backpressure.l0-slowdown-trigger: 1
kv.rocksdb.writebuffer.size: 64kb
server.data-disk.write-limit-ratio: 1.0")
# A third, whose client listener takes SASL/PLAIN with the authorizer on (users admin and fluss),
# for rust/core/tests/cluster_sasl_v1.rs: what Fluss 1.0 changed in authorization.
sasl_v1_started=0
sasl_v1_env=(FLUSS_SASL=1 "FLUSS_RUN_DIR=$REPO/.fluss/run-sasl-v1" FLUSS_COORDINATOR_PORT=9600 FLUSS_TABLET_PORT=9601
  FLUSS_ZK_PORT=9610 "FLUSS_EXTRA_CONF=server.data-disk.write-limit-ratio: 1.0")
# A fourth, with two coordinators (coordinator high availability: the second one is the standby),
# for rust/core/tests/coordinator_ha.rs, which stops and starts them.
ha_started=0
ha_env=("FLUSS_RUN_DIR=$REPO/.fluss/run-ha" FLUSS_COORDINATOR_PORT=9700 FLUSS_STANDBY_COORDINATOR_PORT=9702 FLUSS_TABLET_PORT=9701
  FLUSS_ZK_PORT=2981 "FLUSS_EXTRA_CONF=server.data-disk.write-limit-ratio: 1.0")
# The Rust test targets that mostly wait on the clusters: the Rust step runs them beside the others.
RUST_CLUSTER_TARGETS="lake_tables kv_backpressure partitions cluster_network_faults char_binary cluster_writes cluster_sasl
  cluster_sasl_v1 nested_values nested_ddl cluster_network bucket_rescale schema_evolution cluster_aggregation coordinator_ha"
RUST_CLUSTER_TARGETS="$(echo $RUST_CLUSTER_TARGETS)"
rust_cluster_pid=""
watch_pids=()
rm -f "$REPO"/.fluss/run*.heals
heal_watch() {
  # A process group of its own: cleanup kills all of it. Killing only the script left a restart
  # it had begun running, which started a coordinator after the run had stopped its cluster
  # (seen once: a failover-cluster coordinator left behind, holding its ports).
  setsid env "$@" scripts/fluss-cluster.sh heal-watch >>"$REPO/.fluss/heal-watch.log" 2>&1 &
  watch_pids+=("$!")
}
report_heals() {
  local f
  for f in "$REPO"/.fluss/run*.heals; do
    [ -e "$f" ] || continue
    echo "NOTE: heal-watch restarted the coordinator of $(basename "$f" .heals) $(wc -l <"$f") time(s) (Fluss 0.9.1 lost a table, or the coordinator exited; the cluster_heal step makes one such restart on purpose):"
    cat "$f"
  done
}
# Clusters a run no longer needs are stopped in the background (stop_now STARTED ENV...; true if it
# was started), then waited for (wait_stops).
early_stops=()
stop_now() {
  [ "$1" = 1 ] || return 1
  shift
  env "$@" scripts/fluss-cluster.sh stop >/dev/null 2>&1 &
  early_stops+=("$!")
}
wait_stops() {
  local p
  for p in "${early_stops[@]}"; do wait "$p" 2>/dev/null || true; done
  early_stops=()
}
cleanup() {
  local p
  for p in "${watch_pids[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
  for p in "${watch_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  report_heals
  python3 scripts/test-summary.py "$LOGS" || true
  # The background failover tests run in a process group of their own (setsid below): killing
  # only cargo left its test binary running, which restarted tablet servers of the cluster
  # stopped next (seen after a failed run).
  if [ -n "$rust_cluster_pid" ]; then
    kill -- "-$rust_cluster_pid" 2>/dev/null || kill "$rust_cluster_pid" 2>/dev/null || true
    wait "$rust_cluster_pid" 2>/dev/null || true
  fi
  if [ -n "$failover_pid" ]; then
    kill -- "-$failover_pid" 2>/dev/null || kill "$failover_pid" 2>/dev/null || true
    wait "$failover_pid" 2>/dev/null || true
  fi
  # Then the clusters, all at once (each has its own directories and ports; one after the other,
  # the eight took about a minute at the end of every run).
  stop_now "$cluster_started" || true
  stop_now "$sasl_started" "${sasl_env[@]}" || true
  stop_now "$replicated_started" "${replicated_env[@]}" || true
  stop_now "$failover_started" "${failover_env[@]}" || true
  stop_now "$lake_started" "${lake_env[@]}" || true
  stop_now "$fluss10_started" "${fluss10_env[@]}" "FLUSS_VERSION=${FLUSS_1_0_VERSION:-}" || true
  stop_now "$pressure_started" "${pressure_env[@]}" "FLUSS_VERSION=${FLUSS_1_0_VERSION:-}" || true
  stop_now "$sasl_v1_started" "${sasl_v1_env[@]}" "FLUSS_VERSION=${FLUSS_1_0_VERSION:-}" || true
  stop_now "$ha_started" "${ha_env[@]}" "FLUSS_VERSION=${FLUSS_1_0_VERSION:-}" || true
  wait_stops
  if [ -n "${fluss10_missing:-}" ]; then echo "NOTE: $fluss10_missing"; fi
}
trap cleanup EXIT
need_clusters=0
for p in rust interop fluss10 py cpp alone; do part "$p" && need_clusters=1; done
if [ "$need_clusters" = 1 ] && [ -z "${FLUSS_BOOTSTRAP_SERVERS:-}" ]; then
  if command -v java >/dev/null 2>&1 || [ "${CI:-}" = "true" ]; then
    step "start a real Fluss 0.9.1 cluster"
    line=$(scripts/fluss-cluster.sh start | tail -n 1)
    export "$line"
    cluster_started=1
    heal_watch
    echo "using $FLUSS_BOOTSTRAP_SERVERS"
  else
    echo "WARNING: no Java: the tests against a real Fluss cluster will not run (they must under CI)" >&2
  fi
fi

if [ "$need_clusters" = 1 ] && [ -z "${FLUSS_SASL_BOOTSTRAP_SERVERS:-}" ] && { command -v java >/dev/null 2>&1 || [ "${CI:-}" = "true" ]; }; then
  step "start a second Fluss 0.9.1 cluster with SASL/PLAIN and the authorizer"
  line=$(env "${sasl_env[@]}" scripts/fluss-cluster.sh start | tail -n 1)
  export "$line"
  sasl_started=1
  heal_watch "${sasl_env[@]}"
  echo "using $FLUSS_SASL_BOOTSTRAP_SERVERS"
fi

if [ "$need_clusters" = 1 ] && [ -z "${FLUSS_REPLICATED_BOOTSTRAP_SERVERS:-}" ] && { command -v java >/dev/null 2>&1 || [ "${CI:-}" = "true" ]; }; then
  step "start a third Fluss 0.9.1 cluster: 3 tablet servers, replication factor 3"
  line=$(env "${replicated_env[@]}" FLUSS_OUT_VAR=FLUSS_REPLICATED_BOOTSTRAP_SERVERS \
    FLUSS_EXTRA_CONF="$replicated_conf" scripts/fluss-cluster.sh start | tail -n 1)
  export "$line"
  export FLUSS_REPLICATED_CLUSTER_ENV="${replicated_env[*]}"
  replicated_started=1
  heal_watch "${replicated_env[@]}"
  echo "using $FLUSS_REPLICATED_BOOTSTRAP_SERVERS"
fi

if part rust && [ "${TEST_SERIAL:-0}" != 1 ] && [ "$replicated_started" = 1 ]; then
  step "start a fourth Fluss 0.9.1 cluster: 3 tablet servers, for the Rust failover tests in the background"
  line=$(env "${failover_env[@]}" FLUSS_OUT_VAR=FLUSS_FAILOVER_BOOTSTRAP_SERVERS FLUSS_EXTRA_CONF="$replicated_conf" \
    scripts/fluss-cluster.sh start | tail -n 1)
  export "$line"
  failover_started=1
  heal_watch "${failover_env[@]}"
  echo "using $FLUSS_FAILOVER_BOOTSTRAP_SERVERS"
fi

if [ "$need_clusters" = 1 ] && [ -z "${FLUSS_1_0_BOOTSTRAP_SERVERS:-}" ] && command -v java >/dev/null 2>&1; then
  step "start a Fluss 1.0-line cluster (scripts/fluss-1.0-server.sh)"
  if line=$(scripts/fluss-1.0-server.sh | tail -n 1) && [[ "$line" == FLUSS_VERSION=* ]]; then
    export FLUSS_1_0_VERSION="${line#FLUSS_VERSION=}"
    line=$(env "${fluss10_env[@]}" "FLUSS_VERSION=$FLUSS_1_0_VERSION" FLUSS_OUT_VAR=FLUSS_1_0_BOOTSTRAP_SERVERS scripts/fluss-cluster.sh start | tail -n 1)
    export "$line"
    fluss10_started=1
    echo "using Fluss $FLUSS_1_0_VERSION at $FLUSS_1_0_BOOTSTRAP_SERVERS"
    line=$(env "${pressure_env[@]}" "FLUSS_VERSION=$FLUSS_1_0_VERSION" FLUSS_OUT_VAR=FLUSS_PRESSURE_BOOTSTRAP_SERVERS scripts/fluss-cluster.sh start | tail -n 1)
    export "$line"
    pressure_started=1
    echo "using Fluss $FLUSS_1_0_VERSION with tiny back-pressure thresholds at $FLUSS_PRESSURE_BOOTSTRAP_SERVERS"
    line=$(env "${sasl_v1_env[@]}" "FLUSS_VERSION=$FLUSS_1_0_VERSION" FLUSS_OUT_VAR=FLUSS_SASL_V1_BOOTSTRAP_SERVERS scripts/fluss-cluster.sh start | tail -n 1)
    export "$line"
    sasl_v1_started=1
    echo "using Fluss $FLUSS_1_0_VERSION with SASL/PLAIN and the authorizer at $FLUSS_SASL_V1_BOOTSTRAP_SERVERS"
    line=$(env "${ha_env[@]}" "FLUSS_VERSION=$FLUSS_1_0_VERSION" FLUSS_OUT_VAR=FLUSS_HA_BOOTSTRAP_SERVERS scripts/fluss-cluster.sh start | tail -n 1)
    export "$line"
    export FLUSS_HA_CLUSTER_ENV="${ha_env[*]:0:5} FLUSS_VERSION=$FLUSS_1_0_VERSION"
    ha_started=1
    echo "using Fluss $FLUSS_1_0_VERSION with two coordinators at $FLUSS_HA_BOOTSTRAP_SERVERS"
  else
    fluss10_missing="no Fluss 1.0-line server was available (see scripts/fluss-1.0-server.sh): the tests against Fluss 1.0 did NOT run; only 0.9.1 was tested"
    echo "!!!!! $fluss10_missing !!!!!" >&2
  fi
fi

# A Fluss 0.9.1 server whose ZooKeeper session expires (a stall of tens of seconds on a loaded
# 2-core machine) re-registers, fails and exits. Before each suite, start again whatever of our
# clusters died: `start` is idempotent (a healthy cluster only prints its address, ~0.2 s).
ensure_clusters() {
  if [ "$cluster_started" = 1 ]; then scripts/fluss-cluster.sh start >/dev/null; fi
  if [ "$sasl_started" = 1 ]; then env "${sasl_env[@]}" scripts/fluss-cluster.sh start >/dev/null; fi
  if [ "$replicated_started" = 1 ]; then
    env "${replicated_env[@]}" FLUSS_OUT_VAR=FLUSS_REPLICATED_BOOTSTRAP_SERVERS \
      FLUSS_EXTRA_CONF="$replicated_conf" scripts/fluss-cluster.sh start >/dev/null
  fi
  if [ "$failover_started" = 1 ] && [ -z "$failover_pid" ]; then
    env "${failover_env[@]}" FLUSS_OUT_VAR=FLUSS_FAILOVER_BOOTSTRAP_SERVERS FLUSS_EXTRA_CONF="$replicated_conf" scripts/fluss-cluster.sh start >/dev/null
  fi
  if [ "$fluss10_started" = 1 ]; then
    env "${fluss10_env[@]}" "FLUSS_VERSION=$FLUSS_1_0_VERSION" FLUSS_OUT_VAR=FLUSS_1_0_BOOTSTRAP_SERVERS scripts/fluss-cluster.sh start >/dev/null
  fi
  if [ "$pressure_started" = 1 ]; then
    env "${pressure_env[@]}" "FLUSS_VERSION=$FLUSS_1_0_VERSION" FLUSS_OUT_VAR=FLUSS_PRESSURE_BOOTSTRAP_SERVERS scripts/fluss-cluster.sh start >/dev/null
  fi
  if [ "$sasl_v1_started" = 1 ]; then
    env "${sasl_v1_env[@]}" "FLUSS_VERSION=$FLUSS_1_0_VERSION" FLUSS_OUT_VAR=FLUSS_SASL_V1_BOOTSTRAP_SERVERS scripts/fluss-cluster.sh start >/dev/null
  fi
  if [ "$ha_started" = 1 ]; then
    env "${ha_env[@]}" "FLUSS_VERSION=$FLUSS_1_0_VERSION" FLUSS_OUT_VAR=FLUSS_HA_BOOTSTRAP_SERVERS scripts/fluss-cluster.sh start >/dev/null
  fi
}

if part rust; then
  step "Rust workspace tests"
  # Through scripts/test-runner.sh, which asks libtest for each test's time (build-logs/rust.log,
  # read by the summary at the end).
  # Every cargo command of this run selects --workspace (with --test NAME where it runs a few
  # targets): the same feature set everywhere, so later steps reuse this step's builds
  # (`-p fluss-writer` resolves the features of the core's dependencies differently and compiled
  # the core and its test binaries a second time).
  export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="$REPO/scripts/test-runner.sh"
  cargo test --workspace --no-run
  ensure_clusters
  defer=""
  if [ "$failover_started" = 1 ]; then
    echo "the Rust failover tests run in the background against $FLUSS_FAILOVER_BOOTSTRAP_SERVERS (build-logs/rust-failover.log)"
    # The cluster is stopped as soon as the tests end (nothing else uses it; its five JVMs cost CPU
    # while idle); the same session, so that cleanup's kill reaches the stop too.
    # shellcheck disable=SC2016
    FLUSS_REPLICATED_BOOTSTRAP_SERVERS="$FLUSS_FAILOVER_BOOTSTRAP_SERVERS" FLUSS_REPLICATED_CLUSTER_ENV="${failover_env[*]}" \
      setsid bash -c 'rc=0; cargo test --workspace --test cluster_failover || rc=$?
        env "$@" scripts/fluss-cluster.sh stop >/dev/null 2>&1; exit "$rc"' failover-tests "${failover_env[@]}" \
      >"$LOGS/rust-failover.log" 2>&1 &
    failover_pid=$!
    defer="cluster_failover"
  fi
  # The test targets that mostly wait on the clusters run beside the others (cargo runs one test
  # binary at a time): this part takes about as long as the longer of the two halves.
  cluster_targets=()
  for t in $RUST_CLUSTER_TARGETS; do cluster_targets+=(--test "$t"); done
  echo "the Rust cluster test targets run beside the others (build-logs/rust-cluster.log): $RUST_CLUSTER_TARGETS"
  setsid cargo test --workspace "${cluster_targets[@]}" >"$LOGS/rust-cluster.log" 2>&1 &
  rust_cluster_pid=$!
  rust_rc=0
  FLUSS_TEST_DEFER="$defer $RUST_CLUSTER_TARGETS" cargo test --workspace 2>&1 | tee "$LOGS/rust.log" || rust_rc=$?
  rust_cluster_rc=0
  wait "$rust_cluster_pid" || rust_cluster_rc=$?
  rust_cluster_pid=""
  echo "--- the Rust cluster test targets (build-logs/rust-cluster.log):"
  cat "$LOGS/rust-cluster.log"
  unset CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER
  if [ "$rust_rc" != 0 ] || [ "$rust_cluster_rc" != 0 ]; then
    echo "FAILED: cargo test --workspace status $rust_rc, the cluster test targets status $rust_cluster_rc (build-logs/rust.log, build-logs/rust-cluster.log)" >&2
    exit 1
  fi
  # The three 1.0-line clusters only the Rust tests use (back-pressure, SASL, coordinator HA) are
  # stopped now: ten idle JVMs cost a fifth of a CPU, which the rest of the run needs.
  stop_now "$pressure_started" "${pressure_env[@]}" "FLUSS_VERSION=${FLUSS_1_0_VERSION:-}" && pressure_started=0
  stop_now "$sasl_v1_started" "${sasl_v1_env[@]}" "FLUSS_VERSION=${FLUSS_1_0_VERSION:-}" && sasl_v1_started=0
  stop_now "$ha_started" "${ha_env[@]}" "FLUSS_VERSION=${FLUSS_1_0_VERSION:-}" && ha_started=0
  wait_stops
  unset FLUSS_PRESSURE_BOOTSTRAP_SERVERS FLUSS_SASL_V1_BOOTSTRAP_SERVERS FLUSS_HA_BOOTSTRAP_SERVERS FLUSS_HA_CLUSTER_ENV
fi

if part interop && [ -n "${FLUSS_BOOTSTRAP_SERVERS:-}" ]; then
  if [ -z "${FLUSS_LAKE_BOOTSTRAP_SERVERS:-}" ]; then
    step "start a fourth Fluss 0.9.1 cluster with a Paimon data lake (for the interoperability step)"
    line=$(env "${lake_env[@]}" FLUSS_OUT_VAR=FLUSS_LAKE_BOOTSTRAP_SERVERS scripts/fluss-cluster.sh start | tail -n 1)
    export "$line"
    lake_started=1
    echo "using $FLUSS_LAKE_BOOTSTRAP_SERVERS"
  fi
  step "interoperability with the official Java (0.9.1) and Python (pyfluss 1.0.0) clients"
  ensure_clusters
  # Each Java interop test's time goes to build-logs/rust-interop.log (the summary's slowest 10).
  CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="$REPO/scripts/test-runner.sh" tests-interop/run.sh 2>&1 | tee "$LOGS/rust-interop.log"
  if [ "$lake_started" = 1 ]; then
    env "${lake_env[@]}" scripts/fluss-cluster.sh stop >/dev/null 2>&1 || true
    lake_started=0
    unset FLUSS_LAKE_BOOTSTRAP_SERVERS
  fi
fi

if part fluss10 && [ -n "${FLUSS_1_0_BOOTSTRAP_SERVERS:-}" ]; then
  step "the cluster tests, the golden cluster scenarios and the pyfluss interop against Fluss $FLUSS_1_0_VERSION"
  ensure_clusters
  # The same test binaries as the Rust step, pointed at the 1.0 server. Skipped there:
  # late_upserts_for_a_recreated_partition_cluster, which drops a partition of a primary-key table
  # under load: the 1.0-SNAPSHOT (545c553) tablet server exits on it (FATAL in kv-flush-thread,
  # "memory mapped buffer ... is already closed"; docs/server-compatibility.md). It runs against 0.9.1.
  FLUSS_BOOTSTRAP_SERVERS="$FLUSS_1_0_BOOTSTRAP_SERVERS" CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="$REPO/scripts/test-runner.sh" \
    cargo test --workspace --test cluster_writes --test partitions --test nested_values --test nested_ddl \
    --test schema_evolution --test char_binary -- --skip late_upserts_for_a_recreated_partition_cluster 2>&1 | tee "$LOGS/rust-fluss10.log"
  FLUSS_BOOTSTRAP_SERVERS="$FLUSS_1_0_BOOTSTRAP_SERVERS" CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="$REPO/scripts/test-runner.sh" \
    cargo test --workspace --test golden -- cluster/ 2>&1 | tee -a "$LOGS/rust-fluss10.log"
  FLUSS_BOOTSTRAP_SERVERS="$FLUSS_1_0_BOOTSTRAP_SERVERS" tests-interop/run_pyfluss.sh
fi

if part loom; then
  step "loom models of the dispatcher"
  # Release mode and at most 2 preemptions keep the exhaustive search within about a minute on
  # 2 cores while still covering every interleaving with up to two forced context switches.
  RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR="$CARGO_TARGET_DIR/loom" \
    cargo test -p fluss-writer-dispatch --release --test 'loom_*'
fi
# The coverage-guided fuzzing is `make fuzz`; the Rust tests above replay the committed fuzz
# inputs and their mutations (rust/core/tests/fuzz_replay.rs).

# The Python and C++ suites run side by side (TEST_SERIAL=1: one after the other): both spend
# much of their time waiting on the clusters, on pip and on single-threaded test processes, and
# their builds take turns on cargo's lock of the shared target directory. They share the clusters
# (every test makes tables of its own; the failover tests of both kill a leader of the replicated
# cluster, which scripts/fluss-cluster.sh kill-tablet does one at a time). Each line of output
# carries its suite's tag.
suite() {  # suite TAG COMMAND...: runs COMMAND, its output tagged; returns its status
  local tag="$1"
  shift
  "$@" 2>&1 | sed -u "s/^/[$tag] /"
  return "${PIPESTATUS[0]}"
}
if part py && part cpp && [ "${TEST_SERIAL:-0}" != 1 ]; then
  step "Python and C++ suites, side by side (TEST_SERIAL=1 runs them one after the other)"
  ensure_clusters
  t0=$SECONDS
  suite py tests-py/run.sh & py_pid=$!
  suite cpp tests-cpp/run.sh & cpp_pid=$!
  py_rc=0 cpp_rc=0
  wait "$py_pid" || py_rc=$?
  echo "=== Python suite ended (status $py_rc) after $((SECONDS - t0)) s"
  wait "$cpp_pid" || cpp_rc=$?
  echo "=== C++ suite ended (status $cpp_rc) after $((SECONDS - t0)) s"
  if [ "$py_rc" != 0 ] || [ "$cpp_rc" != 0 ]; then
    echo "FAILED: Python suite status $py_rc, C++ suite status $cpp_rc (the lines tagged [py] / [cpp] above)" >&2
    exit 1
  fi
else
  if part py; then
    step "Python suite"
    ensure_clusters
    tests-py/run.sh
  fi
  if part cpp; then
    step "C++ suite"
    ensure_clusters
    tests-cpp/run.sh
  fi
fi

if [ -n "$failover_pid" ]; then
  step "the Rust failover tests (started in the background by the Rust step)"
  failover_rc=0
  wait "$failover_pid" || failover_rc=$?
  failover_pid=""
  grep -E "^test |test result|panicked|^---- " "$LOGS/rust-failover.log" || true
  if [ "$failover_rc" != 0 ]; then
    echo "FAILED: tests/cluster_failover.rs (status $failover_rc); its whole output:" >&2
    cat "$LOGS/rust-failover.log" >&2
    exit 1
  fi
  env "${failover_env[@]}" scripts/fluss-cluster.sh stop >/dev/null 2>&1 || true
  failover_started=0
fi

if part alone && [ -n "${FLUSS_BOOTSTRAP_SERVERS:-}" ]; then
  # Last, alone: it restarts the shared cluster's tablet server, which every other client sees.
  step "resends under a tiny request timeout, deduplicated by the server (real cluster, alone)"
  ensure_clusters
  cargo test --workspace --test cluster_writes -- --ignored --nocapture resent_batches
  if [ "$cluster_started" = 1 ]; then   # only a cluster of this run has a heal-watch
    step "a table lost by the coordinator (Fluss 0.9.1 bug, made on purpose) is healed by heal-watch (real cluster, alone)"
    ensure_clusters
    FLUSS_HEAL_WATCH=1 cargo test --workspace --test cluster_heal -- --ignored --nocapture
  fi
  step "tablet server restart while writing (real cluster)"
  # The debug build of the workspace tests: a release build of the core would cost minutes.
  cargo test --workspace --test cluster_restart -- --ignored --nocapture
fi

step "all suites passed ($TEST_PARTS)"
# A whole run that passed built every profile: the next new clone seeds its target directory
# from this one (scripts/cargo-target-dir.sh).
if [ "$TEST_PARTS" = "$ALL_PARTS" ]; then touch "$CARGO_TARGET_DIR/.full-run"; fi
