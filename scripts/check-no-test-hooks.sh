#!/usr/bin/env bash
# scripts/check-no-test-hooks.sh PATH...: check that a C++ package (an install prefix) or the given
# files carry none of the test and benchmark hooks (the CMake option FLUSS_WRITER_TEST_HOOKS, cargo
# feature `test-hooks` of rust/cxx): no library (lib*.a, lib*.so*) has a hook's symbol or the forced
# panic's message, and no header names a hook or includes fluss_writer_test_hooks.hpp. A directory
# is searched for libraries and headers; a file is checked as it is. Exit 1 naming what was found.
# scripts/dist.sh cpp runs it on both packages; tests-cpp/run.sh runs it on its hooks build and
# expects it to fail there (so the check is known to see them).
set -euo pipefail
[ "$#" -gt 0 ] || { echo "usage: check-no-test-hooks.sh PREFIX_OR_FILE..." >&2; exit 2; }
# Rust: testing_force_panic, bench_new/_push/_run (and the type RBench) of the cxx bridge; C++:
# ForcePanicInNextCall, RunThroughDispatcher; the forced panic's message.
PATTERN='ForcePanicInNextCall|RunThroughDispatcher|testing_force_panic|bench_new|bench_push|bench_run|RBench|fluss_writer_test_hooks'
files=()
for p in "$@"; do
  if [ -d "$p" ]; then
    while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$p" \( -name 'lib*.a' -o -name 'lib*.so*' -o -name '*.h' -o -name '*.hpp' \) -type f -print0)
  elif [ -f "$p" ]; then
    files+=("$p")
  else
    echo "check-no-test-hooks.sh: no such file or directory: $p" >&2
    exit 2
  fi
done
[ "${#files[@]}" -gt 0 ] || { echo "check-no-test-hooks.sh: no library or header in $*" >&2; exit 2; }
status=0
libs=0
for f in "${files[@]}"; do
  case "$f" in *.a | *.so*) libs=$((libs + 1)) ;; esac
  # The bytes, not nm: symbol tables (static and dynamic) and string constants alike.
  found="$({ grep -aoE "$PATTERN" "$f" || true; } | sort -u | tr '\n' ' ')"
  if [ -n "$found" ]; then
    echo "check-no-test-hooks.sh: $f has test hooks: $found" >&2
    status=1
  fi
done
[ "$libs" -gt 0 ] || { echo "check-no-test-hooks.sh: no library among $*" >&2; exit 2; }
[ "$status" = 0 ] && echo "   no test or benchmark hooks in ${#files[@]} files ($libs libraries)"
exit "$status"
