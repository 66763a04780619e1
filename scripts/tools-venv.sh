#!/usr/bin/env bash
# scripts/tools-venv.sh NAME SPEC...: prints the path of a venv holding the build or test tools
# SPEC... (pip requirement specifiers), made once and then reused by every clone on the machine.
#
# It lives in the user's cache (FLUSS_WRITER_CACHE, else $XDG_CACHE_HOME/fluss-writer, else
# ~/.cache/fluss-writer) under tools/NAME-<hash of the interpreter's version and the specs>, not in
# the clone: its path must not change from clone to clone. maturin's zig support writes compiler
# wrappers (~/.cache/cargo-zigbuild) that name the venv's path, and cargo rebuilds every C
# dependency of the core (zstd-sys and what is built on it) when the compiler changes, so a venv
# per clone cost each fresh clone a 13-minute release build of the wheel. Where the cache is not
# writable, the clone's .venv-NAME. Installs run one at a time (flock); a finished install is
# marked by .ready, so an interrupted one is made again.
#   scripts/dist.sh:    dist  (maturin, zig, auditwheel)
#   tests-py/run.sh:    test  (uv, ruff)
set -euo pipefail
[ "$#" -ge 2 ] || { echo "usage: scripts/tools-venv.sh NAME SPEC..." >&2; exit 2; }
name="$1"
shift
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${FLUSS_WRITER_CACHE:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/fluss-writer}"
key="$( { python3 -c 'import sys; print(sys.version)'; printf '%s\n' "$@"; } | cksum | cut -d' ' -f1)"
venv="$cache/tools/$name-$key"
if ! mkdir -p "$cache/tools" 2>/dev/null || [ ! -w "$cache/tools" ]; then venv="$repo/.venv-$name"; fi
(
  exec 8>"$venv.lock"
  flock 8
  if [ ! -f "$venv/.ready" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check "$@" >&2
    touch "$venv/.ready"
  fi
)
echo "$venv"
