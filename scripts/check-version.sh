#!/usr/bin/env bash
# scripts/check-version.sh: the version is set in one place, [workspace.package] version in
# Cargo.toml, and everything else takes it from there: every crate (version.workspace = true, as
# cargo metadata reports), the Python package (pyproject.toml: dynamic, read by maturin), the C++
# package (CMakeLists.txt reads Cargo.toml), and CHANGELOG.md has an entry for it. The built
# artifacts are checked by scripts/dist.sh (wheel metadata, header, pkg-config, CMake version
# file, fluss_writer::Version()) and tests-py/test_version.py (fluss_writer.__version__).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.cargo/bin:$PATH"
fail() { echo "check-version.sh: $*" >&2; exit 1; }

VERSION="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)"
[ -n "$VERSION" ] || fail "no version in Cargo.toml's [workspace.package]"
# The first version line of Cargo.toml is the one CMakeLists.txt and scripts/dist.sh read.
[ "$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)" = "$VERSION" ] ||
  fail "the first 'version = ' line of Cargo.toml is not [workspace.package]'s"

# Every workspace crate has the workspace version.
others="$(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
v = sys.argv[1]
for p in json.load(sys.stdin)["packages"]:
    if p["version"] != v:
        print(p["name"], p["version"])
' "$VERSION")"
[ -z "$others" ] || fail "crates with another version than $VERSION: $others"
# fuzz/ is not a workspace member (cargo-fuzz builds it with sanitizer flags, with a workspace of
# its own) and is never published: its placeholder version is not a release version.
for f in $(git ls-files '*Cargo.toml' | grep -vx Cargo.toml | grep -vx fuzz/Cargo.toml); do
  if grep -q '^version *=' "$f"; then fail "$f sets its own version (use version.workspace = true)"; fi
done

# Python: no version of its own in pyproject.toml, maturin reads Cargo.toml.
grep -q '^dynamic = \["version"\]' pyproject.toml || fail 'pyproject.toml lacks dynamic = ["version"]'
if grep -q '^version *=' pyproject.toml; then fail "pyproject.toml sets its own version"; fi
# The Rust extension reports the crate version as __version__.
grep -q 'm.add("__version__", env!("CARGO_PKG_VERSION"))' rust/py/src/lib.rs ||
  fail "rust/py/src/lib.rs does not set __version__ from CARGO_PKG_VERSION"

# C++: CMake takes the version from Cargo.toml (run the same extraction as CMakeLists.txt).
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/read.cmake" <<'CMAKE'
file(STRINGS "Cargo.toml" _fw_version_line REGEX "^version = \"[0-9]+\\.[0-9]+\\.[0-9]+[^\"]*\"" LIMIT_COUNT 1)
string(REGEX MATCH "^version = \"([^\"]*)\"" _m "${_fw_version_line}")
message("${CMAKE_MATCH_1}")
CMAKE
cmake_version="$(cmake -P "$tmp/read.cmake" 2>&1)" || fail "cmake could not read Cargo.toml: $cmake_version"
[ "$cmake_version" = "$VERSION" ] || fail "CMake reads version '$cmake_version' from Cargo.toml, not $VERSION"
grep -q 'project(FlussWriter VERSION ${_fw_numeric_version}' CMakeLists.txt ||
  fail "CMakeLists.txt does not take the project version from Cargo.toml"
if grep -nE 'VERSION [0-9]+\.[0-9]+' CMakeLists.txt cpp/CMakeLists.txt | grep -v cmake_minimum_required; then
  fail "a version number is written in CMakeLists.txt"
fi

# CHANGELOG.md has this version's entry.
grep -qE "^## \[?$VERSION\]?( |$)" CHANGELOG.md || fail "CHANGELOG.md has no '## $VERSION' entry"
echo "version $VERSION: crates, pyproject.toml, CMake and CHANGELOG.md agree"
