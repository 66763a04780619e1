#!/usr/bin/env bash
# scripts/check-exports.sh LIB.so: check with `nm -D` that a shared libfluss_writer exports the
# C++ API of fluss-writer and nothing else (cpp/fluss_writer.map): every defined dynamic symbol
# demangles into namespace fluss_writer (or is its vtable / type info), none belongs to the cxx
# bridge or the glue (fluss_writer::ffi, ::detail, ::internal), none is a Rust symbol (legacy
# `_ZN...17h<hash>E` or v0 `_R` mangling) or a C symbol of a dependency (zstd, lz4, the Rust
# runtime), none is a test hook (ForcePanicInNextCall, RunThroughDispatcher), and the API's entry
# points are there. Exit 1 with the offending symbols otherwise.
set -euo pipefail
LIB="${1:?usage: check-exports.sh LIB.so}"
[ -f "$LIB" ] || { echo "check-exports.sh: no such file: $LIB" >&2; exit 1; }

# Defined dynamic symbols (undefined ones, U and w, are what the library imports).
raw="$(nm -D --defined-only "$LIB" | awk '{print $NF}' | sed 's/@.*//' | sort -u)"
demangled="$(printf '%s\n' "$raw" | c++filt)"
total="$(printf '%s\n' "$raw" | grep -c . || true)"

bad_raw="$(printf '%s\n' "$raw" | grep -E '^_R|17h[0-9a-f]{16}E$|^(ZSTD|ZDICT|LZ4|XXH|HUF|FSE)|rust|cxxbridge' || true)"
bad_names="$(printf '%s\n' "$demangled" |
  grep -vE '^((vtable|typeinfo|typeinfo name) for )?fluss_writer::' |
  grep -vxE 'FLUSS_WRITER_[0-9_]+' || true)"
internal="$(printf '%s\n' "$demangled" | grep -E '^((vtable|typeinfo|typeinfo name) for )?fluss_writer::(ffi|detail|internal)::' || true)"

status=0
if [ -n "$bad_raw" ]; then
  echo "check-exports.sh: $LIB exports Rust or third-party symbols:" >&2
  printf '%s\n' "$bad_raw" | head -n 20 | sed 's/^/  /' >&2
  status=1
fi
if [ -n "$bad_names" ]; then
  echo "check-exports.sh: $LIB exports symbols outside fluss_writer's C++ API:" >&2
  printf '%s\n' "$bad_names" | head -n 20 | sed 's/^/  /' >&2
  status=1
fi
if [ -n "$internal" ]; then
  echo "check-exports.sh: $LIB exports the bridge's or the glue's internals:" >&2
  printf '%s\n' "$internal" | head -n 20 | sed 's/^/  /' >&2
  status=1
fi
# The test and benchmark hooks (CMake option FLUSS_WRITER_TEST_HOOKS) are not in a shipped library.
hooks="$(printf '%s\n' "$demangled" | grep -E 'fluss_writer::testing::(ForcePanicInNextCall|RunThroughDispatcher)' || true)"
if [ -n "$hooks" ]; then
  echo "check-exports.sh: $LIB exports test hooks (built with FLUSS_WRITER_TEST_HOOKS):" >&2
  printf '%s\n' "$hooks" | sed 's/^/  /' >&2
  status=1
fi
# Entry points an application calls (a library exporting nothing would pass the checks above).
for want in 'fluss_writer::Version()' 'fluss_writer::Connection::Create(' 'fluss_writer::WriterBase::Flush(' \
  'fluss_writer::testing::HighWatermark(' 'fluss_writer::Job::Run(' 'fluss_writer::Job::~Job('; do
  if ! printf '%s\n' "$demangled" | grep -qF "$want"; then
    echo "check-exports.sh: $LIB does not export $want..." >&2
    status=1
  fi
done
[ "$status" = 0 ] && echo "   nm -D: $total symbols exported, all of them fluss_writer's C++ API (no Rust, cxx or third-party symbols)"
exit "$status"
