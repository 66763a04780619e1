#!/usr/bin/env sh
# Prints the cargo target directory every build of this repository uses unless CARGO_TARGET_DIR
# is set: one directory in the user's cache, outside the clone, so that every clone on the machine
# (CI's fresh clone included) reuses what an earlier build compiled. Nothing depends on it: an
# empty or missing cache only makes the first build slower. Cargo keys its artifacts by crate,
# version, features, profile and compiler, so clones, branches and toolchains can share it; delete
# the directory to reclaim the disk (`make clean-cache`).
#   FLUSS_WRITER_CACHE   the cache directory (default: $XDG_CACHE_HOME/fluss-writer, else
#                        ~/.cache/fluss-writer); its target/ is printed.
# Where the cache cannot be created (no HOME, read-only), the clone's own target/ is printed.
set -eu
repo="$(cd "$(dirname "$0")/.." && pwd)"
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
  echo "$CARGO_TARGET_DIR"
  exit 0
fi
cache="${FLUSS_WRITER_CACHE:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/fluss-writer}"
if mkdir -p "$cache/target" 2>/dev/null && [ -w "$cache/target" ]; then
  echo "$cache/target"
else
  echo "$repo/target"
fi
