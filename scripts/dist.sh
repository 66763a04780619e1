#!/usr/bin/env bash
# scripts/dist.sh (`make dist`): build the release artifacts into dist/ and check them as a user
# gets them. Exits non-zero when any check fails.
#
#   scripts/dist.sh            # both parts
#   scripts/dist.sh python     # the sdist and the wheel
#   scripts/dist.sh cpp        # the C++ packages
#
# python: dist/fluss_writer-V.tar.gz and dist/fluss_writer-V-cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
#   1. `maturin sdist`;
#   2. the wheel is built FROM that sdist (unpacked under build-dist/sdist; only the files that
#      changed get a new time, so cargo's incremental build still works), so an sdist that misses a
#      file fails here;
#   3. `maturin build --release --zig --compatibility manylinux2014`: zig (the ziglang package from
#      PyPI) links against glibc 2.17's symbol versions whatever the host's glibc is; the release
#      profile has no debug info and maturin strips the module (pyproject.toml);
#   4. checks: `auditwheel show` says manylinux_2_17_x86_64, the wheel is at most DIST_MAX_WHEEL_MB,
#      the extension module at most DIST_MAX_MODULE_MB and has no benchmark or test hook (built
#      without the cargo features `bench` and `test-hooks`), and the wheel's version is Cargo.toml's.
# cpp: the CMake package in Release, static (dist/cpp/static: the plain `cmake -S . -B dir &&
#   cmake --build dir && cmake --install dir`, no option) and shared (dist/cpp/shared,
#   -DFLUSS_WRITER_BUILD_SHARED=ON), each an install prefix and a .tar.gz; checks:
#   libfluss_writer_cxx.a is at most DIST_MAX_STATIC_MB, `nm -D` of libfluss_writer.so shows only
#   the C++ API (scripts/check-exports.sh), no library or header has a test or benchmark hook
#   (scripts/check-no-test-hooks.sh), the header's and pkg-config's versions are Cargo.toml's,
#   and cpp/examples builds with CMake and with pkg-config against each package and runs (every
#   example, with ctest).
#
# Environment: CARGO_TARGET_DIR (target), DIST_DIR (dist), DIST_BUILD (build-dist), JOBS (2),
# DIST_MAX_WHEEL_MB (10), DIST_MAX_MODULE_MB (30), DIST_MAX_STATIC_MB (60).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="$("$REPO/scripts/cargo-target-dir.sh")"
DIST="${DIST_DIR:-$REPO/dist}"
BUILD="${DIST_BUILD:-$REPO/build-dist}"
JOBS="${JOBS:-2}"
MAX_WHEEL_MB="${DIST_MAX_WHEEL_MB:-10}"
MAX_MODULE_MB="${DIST_MAX_MODULE_MB:-30}"
MAX_STATIC_MB="${DIST_MAX_STATIC_MB:-60}"
VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
[ -n "$VERSION" ] || { echo "dist.sh: no version in Cargo.toml" >&2; exit 1; }
PARTS=("$@")
[ "${#PARTS[@]}" -gt 0 ] || PARTS=(python cpp)
mkdir -p "$DIST" "$BUILD"

say() { printf '== dist: %s\n' "$*"; }
fail() { printf 'dist.sh: FAILED: %s\n' "$*" >&2; exit 1; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
# check_size LABEL FILE LIMIT_MB: prints the size, fails above the limit.
check_size() {
  local bytes
  bytes=$(stat -c %s "$2")
  say "$1: $(mib "$bytes") MiB ($bytes bytes; limit $3 MiB)"
  [ "$bytes" -le $(($3 * 1048576)) ] || fail "$1 is $(mib "$bytes") MiB, over the limit of $3 MiB"
}

python_dist() {
  # The build tools' venv, at a path every clone shares (scripts/tools-venv.sh says why).
  local tools
  tools="$("$REPO/scripts/tools-venv.sh" dist 'maturin>=1.9.4,<2' 'ziglang>=0.13,<0.18' 'auditwheel>=6,<7')" ||
    fail "could not install maturin, zig and auditwheel"
  say "build tools: $tools"
  export PATH="$tools/bin:$PATH"  # maturin finds zig through the venv's python

  say "sdist"
  rm -f "$DIST"/fluss_writer-*.tar.gz "$DIST"/fluss_writer-*.whl
  maturin sdist -o "$DIST" >/dev/null
  local sdist="$DIST/fluss_writer-$VERSION.tar.gz"
  [ -f "$sdist" ] || fail "maturin sdist did not write $sdist"

  say "wheel from the sdist (release profile, zig, manylinux2014)"
  local stage="$BUILD/sdist-stage" src="$BUILD/sdist/fluss_writer-$VERSION"
  rm -rf "$stage" && mkdir -p "$stage" "$src"
  tar xzf "$sdist" -C "$stage"
  # Copy into the build tree only what differs (the sdist's files all carry one fixed time, which
  # cargo would take as unchanged), and drop what the sdist no longer has.
  python3 - "$stage/fluss_writer-$VERSION" "$src" <<'EOF'
import filecmp, os, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
for root, dirs, files in os.walk(src):
    rel = os.path.relpath(root, src)
    os.makedirs(os.path.join(dst, rel), exist_ok=True)
    for f in files:
        a, b = os.path.join(root, f), os.path.join(dst, rel, f)
        if not os.path.exists(b) or not filecmp.cmp(a, b, shallow=False):
            shutil.copyfile(a, b)
for root, dirs, files in os.walk(dst, topdown=False):
    rel = os.path.relpath(root, dst)
    for f in files:
        if not os.path.exists(os.path.join(src, rel, f)):
            os.remove(os.path.join(root, f))
    if not os.path.exists(os.path.join(src, rel)):
        os.rmdir(root)
EOF
  rm -rf "$stage"
  local t0=$SECONDS
  (cd "$src" && maturin build --release --zig --compatibility manylinux2014 -o "$DIST")
  say "wheel built in $((SECONDS - t0)) s"
  local wheels=("$DIST"/fluss_writer-"$VERSION"-cp39-abi3-*manylinux_2_17_x86_64*.whl)
  [ -f "${wheels[0]}" ] || fail "no fluss_writer-$VERSION-cp39-abi3-*manylinux_2_17_x86_64 wheel in $DIST: $(ls "$DIST")"
  local wheel="${wheels[0]}"
  say "$(basename "$wheel")"

  say "auditwheel show"
  local shown
  shown="$(auditwheel show "$wheel" 2>&1)" || { echo "$shown"; fail "auditwheel show rejected the wheel"; }
  echo "$shown" | sed 's/^/   /'
  echo "$shown" | tr -s ' \n' ' ' | grep -q 'consistent with the following platform tag: "manylinux_2_17_x86_64"' ||
    fail "auditwheel does not find the wheel consistent with manylinux_2_17_x86_64"

  check_size "wheel" "$wheel" "$MAX_WHEEL_MB"
  local unpacked="$BUILD/wheel-unpacked"
  rm -rf "$unpacked" && mkdir -p "$unpacked"
  python3 -m zipfile -e "$wheel" "$unpacked"
  check_size "extension module fluss_writer/_native.abi3.so (as installed)" "$unpacked/fluss_writer/_native.abi3.so" "$MAX_MODULE_MB"
  if readelf -S "$unpacked/fluss_writer/_native.abi3.so" | grep -q '\.debug_'; then
    fail "the extension module carries debug sections"
  fi
  # No benchmark or test hook (cargo features `bench`, `test-hooks` of rust/py): their Python
  # names and the forced panic's message are strings of the module when compiled in.
  local hooks
  hooks="$({ grep -aoE '_panic_for_test|_panic_on_next_write|bench_dispatch|panic forced by' \
    "$unpacked/fluss_writer/_native.abi3.so" || true; } | sort -u | tr '\n' ' ')"
  [ -z "$hooks" ] || fail "the extension module has benchmark or test hooks: $hooks"
  say "no benchmark or test hooks in the extension module"
  grep -qx "Version: $VERSION" "$unpacked/fluss_writer-$VERSION.dist-info/METADATA" ||
    fail "the wheel's METADATA does not say Version: $VERSION"
  rm -rf "$unpacked"
  check_size "sdist" "$sdist" "$MAX_WHEEL_MB"
}

cpp_dist() {
  local gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  for kind in static shared; do
    local dir="$BUILD/cpp-$kind" prefix="$DIST/cpp/$kind" t0=$SECONDS
    rm -rf "$prefix"
    if [ "$kind" = static ]; then
      # The plain three commands of the README ("C++ from source"): no option, only the
      # environment (the cargo target dir; -Werror and the generator at the first configure; the
      # jobs). The cache is made anew each time (the build outputs stay), so it is the defaults
      # themselves that must give this Release library without tests, benchmark or hooks.
      say "C++ package ($kind): cmake -S . -B $dir && cmake --build $dir && cmake --install $dir"
      rm -f "$dir/CMakeCache.txt"
      CXXFLAGS="-Werror=all -Werror=extra" CMAKE_GENERATOR="${gen[1]:-Unix Makefiles}" cmake -S . -B "$dir" >/dev/null
      local opt
      for opt in CMAKE_BUILD_TYPE:STRING=Release FLUSS_WRITER_BUILD_TESTS:BOOL=OFF FLUSS_WRITER_BUILD_BENCH:BOOL=OFF \
        FLUSS_WRITER_TEST_HOOKS:BOOL=OFF FLUSS_WRITER_BUILD_SHARED:BOOL=OFF "FLUSS_WRITER_CARGO_TARGET_DIR:PATH=$CARGO_TARGET_DIR"; do
        grep -qx "$opt" "$dir/CMakeCache.txt" || fail "the default configuration does not have $opt"
      done
      CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" cmake --build "$dir"
    else
      say "C++ package ($kind): Release build with -DFLUSS_WRITER_BUILD_SHARED=ON"
      # A new generator needs a new build dir; the cache of an older configure is kept otherwise.
      cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DFLUSS_WRITER_BUILD_TESTS=OFF \
        -DFLUSS_WRITER_BUILD_BENCH=OFF -DFLUSS_WRITER_TEST_HOOKS=OFF -DFLUSS_WRITER_BUILD_SHARED=ON \
        -DCMAKE_CXX_FLAGS="-Werror=all -Werror=extra" -DFLUSS_WRITER_CARGO_TARGET_DIR="$CARGO_TARGET_DIR" >/dev/null
      cmake --build "$dir" -j "$JOBS"
    fi
    say "C++ ($kind) built in $((SECONDS - t0)) s"
    cmake --install "$dir" --prefix "$prefix" >/dev/null
    local libdir
    libdir="$(cd "$prefix" && ls -d lib* | head -n 1)"
    [ -n "$libdir" ] || fail "no lib dir in $prefix"

    # No test or benchmark hook in the libraries or the headers (FLUSS_WRITER_TEST_HOOKS is off).
    scripts/check-no-test-hooks.sh "$prefix"

    # The version everywhere: the header, pkg-config, CMake's version file.
    grep -q "^#define FLUSS_WRITER_VERSION_STRING \"$VERSION\"$" "$prefix/include/fluss_writer_version.h" ||
      fail "fluss_writer_version.h does not define FLUSS_WRITER_VERSION_STRING \"$VERSION\""
    [ "$(PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" pkg-config --modversion fluss_writer)" = "$VERSION" ] ||
      fail "pkg-config --modversion fluss_writer is not $VERSION"
    grep -q "PACKAGE_VERSION \"${VERSION%%-*}\"" "$prefix/$libdir/cmake/FlussWriter/FlussWriterConfigVersion.cmake" ||
      fail "FlussWriterConfigVersion.cmake is not ${VERSION%%-*}"

    if [ "$kind" = static ]; then
      [ ! -e "$prefix/$libdir/libfluss_writer.so" ] || fail "the static package installed libfluss_writer.so"
      check_size "static library $libdir/libfluss_writer_cxx.a (Rust core)" "$prefix/$libdir/libfluss_writer_cxx.a" "$MAX_STATIC_MB"
      say "static library $libdir/libfluss_writer.a (C++ layer): $(mib "$(stat -c %s "$prefix/$libdir/libfluss_writer.a")") MiB"
      if readelf -S "$prefix/$libdir/libfluss_writer_cxx.a" 2>/dev/null | grep -qE '\.debug_info|\.llvmbc'; then
        fail "libfluss_writer_cxx.a carries debug info or LLVM bitcode"
      fi
    else
      [ ! -e "$prefix/$libdir/libfluss_writer_cxx.a" ] || fail "the shared package installed the Rust static library"
      local so
      so="$(readlink -f "$prefix/$libdir/libfluss_writer.so")"
      say "shared library $libdir/$(basename "$so"): $(mib "$(stat -c %s "$so")") MiB"
      scripts/check-exports.sh "$so"
    fi

    # The example against the installed package: CMake, then pkg-config (no CMake).
    say "C++ ($kind): cpp/examples with find_package(FlussWriter)"
    rm -rf "$BUILD/example-cmake-$kind"
    cmake -S cpp/examples -B "$BUILD/example-cmake-$kind" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_FLAGS="-Werror" >/dev/null
    cmake --build "$BUILD/example-cmake-$kind" -j "$JOBS" >/dev/null
    run_example "$BUILD/example-cmake-$kind/append_with_callbacks" "$kind"
    # Every example against this installed package (ctest of cpp/examples; sasl_connect only when
    # FLUSS_SASL_BOOTSTRAP_SERVERS is set, as the SASL test cluster's admin unless given).
    say "C++ ($kind): every cpp/examples program against the installed package (ctest)"
    (cd "$BUILD/example-cmake-$kind" && FLUSS_SASL_USERNAME="${FLUSS_SASL_USERNAME:-admin}" \
      FLUSS_SASL_PASSWORD="${FLUSS_SASL_PASSWORD:-admin-secret}" ctest --output-on-failure -j "$JOBS" --timeout 120) \
      || fail "the cpp/examples programs against the $kind package (ctest in $BUILD/example-cmake-$kind)"

    say "C++ ($kind): cpp/examples with pkg-config"
    local pc=(env PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" pkg-config)
    local cflags libs rpath=()
    cflags="$("${pc[@]}" --cflags fluss_writer)"
    libs="$("${pc[@]}" --libs fluss_writer)"
    [ "$kind" = shared ] && rpath=("-Wl,-rpath,$("${pc[@]}" --variable=libdir fluss_writer)")
    echo "   c++ -std=c++17 $cflags append_with_callbacks.cpp $libs ${rpath[*]}"
    # shellcheck disable=SC2086
    ${CXX:-c++} -std=c++17 -O2 -Wall -Wextra -Werror $cflags cpp/examples/append_with_callbacks.cpp $libs "${rpath[@]}" \
      -o "$BUILD/example-pkgconfig-$kind"
    run_example "$BUILD/example-pkgconfig-$kind" "$kind"

    tar czf "$DIST/fluss-writer-cpp-$VERSION-linux-x86_64-$kind.tar.gz" -C "$prefix" .
    say "$DIST/fluss-writer-cpp-$VERSION-linux-x86_64-$kind.tar.gz"
  done
}

# run_example BINARY KIND: runs it; a shared-kind binary must load libfluss_writer.so, and neither
# may need anything from the build tree.
run_example() {
  local needed
  needed="$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
  if [ "$2" = shared ]; then
    [[ "$needed" == *"libfluss_writer.so."* ]] || fail "$1 does not load libfluss_writer.so (needs: $needed)"
  else
    [[ "$needed" != *"libfluss_writer"* ]] || fail "$1 (static) loads a fluss_writer shared library (needs: $needed)"
  fi
  local out
  out="$("$1")" || fail "$1 failed: $out"
  echo "   $out"
  [[ "$out" == *"(fluss-writer $VERSION)"* ]] || fail "$1 does not report version $VERSION"
}

for part in "${PARTS[@]}"; do
  case "$part" in
    python) python_dist ;;
    cpp) cpp_dist ;;
    *) fail "unknown part '$part' (python, cpp)" ;;
  esac
done
say "done: $(cd "$DIST" && ls -d fluss* | tr '\n' ' ')"
