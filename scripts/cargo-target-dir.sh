#!/usr/bin/env sh
# Prints the cargo target directory every build of this repository uses unless CARGO_TARGET_DIR
# is set: a directory of this clone's own in the user's cache, outside the clone, which starts
# with what the other clones on the machine compiled (CI's fresh clone included), so that a new
# clone compiles only fluss-writer's own crates and a second run only what changed. Nothing
# depends on it: an empty or missing cache only makes the first build slower.
#
# Why one directory per clone and not one for all: cargo decides that a workspace crate is up to
# date by comparing its sources' modification times with its last build, and names its artifacts
# by their path inside the workspace. Two clones sharing one directory would overwrite each
# other's builds of fluss-writer's crates, and a clone whose files are older than another clone's
# last build would run that clone's code without compiling its own.
#
# Layout: $cache/clones/<clone name>-<hash of its path>/target. A clone's directory is made once,
# from the one of the newest passing `make test` (`.full-run`), else the one used last (the
# newest `.last-used`; before the first, the older shared $cache/target): hard links of every profile's third-party artifacts (deps/, build/,
# .fingerprint/), without the workspace crates' artifacts, which cargo then builds from the
# clone's own sources. Hard links cost no disk; cargo and rustc replace a file when they rebuild
# it, never write into it. Directories unused for 3 days are removed, the 3 newest always kept.
#   FLUSS_WRITER_CACHE   the cache directory (default: $XDG_CACHE_HOME/fluss-writer, else
#                        ~/.cache/fluss-writer). `make clean-cache` removes its clones/ and target/.
# Where the cache cannot be created (no HOME, read-only), the clone's own target/ is printed.
set -eu
repo="$(cd "$(dirname "$0")/.." && pwd)"
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
  echo "$CARGO_TARGET_DIR"
  exit 0
fi
cache="${FLUSS_WRITER_CACHE:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/fluss-writer}"
key="$(basename "$repo")-$(printf %s "$repo" | cksum | cut -d' ' -f1)"
dir="$cache/clones/$key/target"
if ! mkdir -p "$cache/clones" 2>/dev/null || [ ! -w "$cache/clones" ]; then
  echo "$repo/target"
  exit 0
fi

# Seed $2 from the target directory $1: third-party artifacts only (see above).
seed() {
  find "$1" -maxdepth 4 -type d -name .fingerprint | while read -r fp; do
    prof="$(dirname "$fp")"
    rel="${prof#"$1"}"
    mkdir -p "$2$rel"
    for sub in deps build .fingerprint; do
      if [ -d "$prof/$sub" ]; then cp -al "$prof/$sub" "$2$rel/$sub" 2>/dev/null || true; fi
    done
    # A workspace crate's units are named fluss-writer[-part]-<16 hex>; its files in deps/ and
    # build/ carry the same hash.
    ls "$fp" | sed -n 's/^fluss-writer\(-[a-z-]*\)\{0,1\}-\([0-9a-f]\{16\}\)$/\2/p' | while read -r h; do
      rm -rf "$2$rel/.fingerprint/"*-"$h" "$2$rel/deps/"*-"$h" "$2$rel/deps/"*-"$h".* "$2$rel/build/"*-"$h"
    done
  done
}

if [ ! -d "$dir" ]; then
  # The donor: the directory of the newest whole `make test` that passed (scripts/test-all.sh
  # leaves `.full-run` there: every profile built, the wheel's target included), else the one
  # used last. A development clone that only ran `make check` lacks the release builds, and
  # seeding from it cost a fresh clone a rebuild of them.
  donor=""
  for marker in .full-run .last-used; do
    for d in $(ls -t "$cache"/clones/*/target/"$marker" 2>/dev/null); do
      donor="$(dirname "$d")"
      break 2
    done
  done
  if [ -z "$donor" ] && [ -d "$cache/target" ]; then donor="$cache/target"; fi
  tmp="$cache/clones/.seeding-$key-$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  if [ -n "$donor" ]; then
    echo "cargo-target-dir: seeding $dir from $donor (third-party artifacts, hard links)" >&2
    seed "$donor" "$tmp"
  fi
  mkdir -p "$cache/clones/$key"
  # Another process may have made it meanwhile: keep that one.
  mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
fi
touch "$dir/.last-used"

# Prune: directories unused for 3 days, except the 3 used last.
ls -t "$cache"/clones/*/target/.last-used 2>/dev/null | tail -n +4 | while read -r stamp; do
  if [ -n "$(find "$stamp" -mtime +3 2>/dev/null)" ]; then rm -rf "$(dirname "$(dirname "$stamp")")"; fi
done
echo "$dir"
