#!/usr/bin/env bash
# scripts/docs.sh (`make docs`): build the documentation site into build-docs/site, strictly: a
# warning of any of the three tools fails the build.
#
#   1. rustdoc of the crates users call (`cargo doc --no-deps`, RUSTDOCFLAGS="-D warnings": a
#      broken intra-doc link or a missing doc fails);
#   2. Doxygen of the C++ header cpp/include/fluss_writer.hpp (WARN_AS_ERROR=FAIL_ON_WARNINGS);
#   3. MkDocs (mkdocs-material) with mkdocstrings, `mkdocs build --strict` (mkdocs.yml): the
#      README as the home page, docs/, CHANGELOG.md, SECURITY.md and every Markdown file they link
#      to, the Python API rendered from the package's stubs (python/fluss_writer/_native.pyi,
#      read statically: nothing is built or imported), and the rustdoc and Doxygen output under
#      api/rust and api/cpp. Broken links, missing headings and unresolved references fail.
#
# The pages are staged into build-docs/src with the repository's layout (so that the links that
# work on GitHub work on the site) and built into build-docs/site; open build-docs/site/index.html.
#
# Installs what it needs on a fresh machine: the Python tools into .venv-docs (pinned versions),
# Doxygen with apt-get when missing (as root). Environment: CARGO_TARGET_DIR (default: scripts/cargo-target-dir.sh).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="$("$REPO/scripts/cargo-target-dir.sh")"
BUILD="$REPO/build-docs"  # mkdocs.yml names it
TOOLS="$REPO/.venv-docs"
PY_TOOLS=('mkdocs==1.6.1' 'mkdocs-material==9.8.2' 'mkdocstrings==1.0.8' 'mkdocstrings-python==2.0.11')
t_all=$SECONDS
export NO_MKDOCS_2_WARNING=1

echo "== tools"
[ -x "$TOOLS/bin/python" ] || python3 -m venv "$TOOLS"
"$TOOLS/bin/python" -m pip install -q --disable-pip-version-check "${PY_TOOLS[@]}"
if ! command -v doxygen >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get install -y -q doxygen >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q doxygen >/dev/null; })
  else
    echo "docs.sh: doxygen is missing; install it (apt-get install doxygen)" >&2
    exit 1
  fi
fi

rm -rf "$BUILD"
mkdir -p "$BUILD/src/api"

echo "== rustdoc (-D warnings)"
t0=$SECONDS
RUSTDOCFLAGS="-D warnings" cargo doc -q --no-deps -p fluss-writer -p fluss-writer-dispatch
cp -a "$CARGO_TARGET_DIR/doc" "$BUILD/src/api/rust"
echo "   $((SECONDS - t0)) s"

echo "== doxygen (warnings are errors)"
t0=$SECONDS
VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
mkdir -p "$BUILD/doxygen"
cat >"$BUILD/doxygen/Doxyfile" <<DOX
PROJECT_NAME           = "fluss-writer C++"
PROJECT_NUMBER         = $VERSION
INPUT                  = $REPO/cpp/include/fluss_writer.hpp
STRIP_FROM_PATH        = $REPO/cpp/include
OUTPUT_DIRECTORY       = $BUILD/doxygen
GENERATE_HTML          = YES
HTML_OUTPUT            = html
GENERATE_LATEX         = NO
EXTRACT_ALL            = YES
EXTRACT_STATIC         = YES
HIDE_UNDOC_RELATIONS   = NO
SOURCE_BROWSER         = YES
QUIET                  = YES
WARNINGS               = YES
WARN_IF_DOC_ERROR      = YES
WARN_NO_PARAMDOC       = NO
WARN_AS_ERROR          = FAIL_ON_WARNINGS
EXCLUDE_SYMBOLS        = detail detail::*
HAVE_DOT               = NO
CLASS_GRAPH            = NO
DOX
doxygen "$BUILD/doxygen/Doxyfile"
cp -a "$BUILD/doxygen/html" "$BUILD/src/api/cpp"
echo "   $((SECONDS - t0)) s"

echo "== mkdocs build --strict"
t0=$SECONDS
# Stage the pages with the repository's layout: these Markdown files and, transitively, every
# local file a staged page links to.
"$TOOLS/bin/python" - "$REPO" "$BUILD/src" <<'PY'
import pathlib, re, shutil, sys
repo, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
todo = [repo / "README.md", repo / "CHANGELOG.md", repo / "SECURITY.md"]
for d in ("docs", "examples"):
    todo += sorted((repo / d).rglob("*.md")) if (repo / d).is_dir() else []
seen = set()
link = re.compile(r"\]\(\s*<?([^)\s>#]+)")
fence_mode = re.compile(r"^([ \t]*(?:`{3,}|~{3,})[A-Za-z0-9_+-]+)[ ,][^`\n]*$", re.M)
while todo:
    p = todo.pop().resolve()
    if p in seen or not p.is_file():
        continue
    seen.add(p)
    rel = p.relative_to(repo)
    (out / rel).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(p, out / rel)
    if p.suffix == ".md":
        # The fences' run modes (```python cluster, ```cpp sasl, ```rust no_run: the test harnesses
        # read them) are not languages: MkDocs would render such a block as paragraphs.
        text = p.read_text(encoding="utf-8")
        (out / rel).write_text(fence_mode.sub(r"\1", text), encoding="utf-8")
    if p.suffix == ".md":
        for target in link.findall(p.read_text(encoding="utf-8")):
            if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                q = (p.parent / target).resolve()
                if q.is_relative_to(repo):
                    todo.append(q)
(out / "api" / "index.md").write_text(
    "# Rust and C++ API\n\n"
    "* Rust: [fluss_writer](rust/fluss_writer/index.html), the crate applications use, and "
    "[fluss_writer_dispatch](rust/fluss_writer_dispatch/index.html), its callback dispatcher (rustdoc).\n"
    "* C++: [the header fluss_writer.hpp](cpp/index.html) (Doxygen).\n"
    "* Python: [the fluss_writer package](../docs/api/python.md).\n",
    encoding="utf-8",
)
print(f"   staged {len(seen)} files")
PY
"$TOOLS/bin/mkdocs" build -q --strict -f "$REPO/mkdocs.yml" -d "$BUILD/site"
echo "   $((SECONDS - t0)) s"
echo "== docs: $BUILD/site/index.html ($((SECONDS - t_all)) s)"
