"""Links inside the repository lead somewhere.

* Every relative Markdown link ``[text](path)`` / ``[text](path#anchor)`` in a ``*.md`` file names
  a file or folder that exists (relative to the Markdown file), and an anchor into a Markdown file
  names one of its headings (GitHub's rule: lower case, punctuation dropped, spaces to ``-``).
* Every mention of a repository path under ``docs/``, ``examples/`` or ``scripts/`` in Markdown,
  Rust, C++, Python, Java and protobuf sources (``see docs/callback-contract.md``) names a file
  that exists (relative to the repository root; ``*`` and ``{a,b}`` patterns must match something).
* A citation of a section, ``docs/wire-format.md, "Bucketing"`` (also ``... "A" and "B"``, and
  across a line break of a comment), names a heading of that file or a bold run-in label that
  starts a paragraph or a list item (``* **Per-partition bucket counts** (Fluss 1.0) ...``).
* Every Markdown file a source names (``notes.md``) is one of the repository's: code and docs
  point only to files inside it.

Files are the ones git knows (tracked and untracked, ignored ones left out).
"""

from __future__ import annotations

import pathlib
import re
import subprocess
from functools import cache
from typing import List, Set

REPO = pathlib.Path(__file__).resolve().parents[2]
SOURCE_EXTS = (".md", ".rs", ".hpp", ".h", ".cpp", ".py", ".pyi", ".sh", ".toml", ".txt", ".proto", ".java")
SKIP_DIRS = {"target", "dist", "node_modules", "site", "build"}

MD_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
MENTION = re.compile(r"(?<![\w./-])((?:docs|examples|scripts)/[\w.*{},/-]*[\w*}])")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
SELF = "tests-py/docs/test_links.py"
# A line break inside a comment: the newline and the next line's comment leader.
_BREAK = r"\s*(?:\n[ \t]*(?://[/!]?|#|\*)?[ \t]*)?"
CITATION = re.compile(
    r"((?:docs|examples|scripts)/[\w./-]+\.md),"
    + _BREAK + r'"([^"\n<]+)"'
    + r"(?:\s+and" + _BREAK + r'"([^"\n<]+)")?'
)
MD_NAME = re.compile(r"(?<![\w./-])([\w-]+\.md)\b")
# Markdown files that sources name but that are not in the repository on purpose: the page
# scripts/docs.sh writes into the site (api/index.md), and the file tests-py/docs/test_markdown.py
# writes into a temporary folder.
MD_MADE_ELSEWHERE = {"index.md", "sample.md"}


def repo_files() -> List[pathlib.Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=REPO, capture_output=True, text=True, check=True,
        ).stdout.split("\n")
        paths = [REPO / p for p in out if p]
    except (OSError, subprocess.CalledProcessError):
        paths = [p for p in REPO.rglob("*") if p.is_file()]
    def skipped(part: str) -> bool:
        return part.startswith(".") or part in SKIP_DIRS or part.startswith("build")

    return [
        p for p in paths
        if p.suffix in SOURCE_EXTS and p.exists() and not any(skipped(part) for part in p.relative_to(REPO).parts[:-1])
    ]


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(path: pathlib.Path) -> Set[str]:
    seen: dict = {}
    out: Set[str] = set()
    in_fence = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        m = None if in_fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    out.update(re.findall(r'<a (?:name|id)="([^"]+)"', path.read_text(encoding="utf-8")))
    return out


def expand(pattern: str) -> List[str]:
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return [x for alt in m.group(1).split(",") for x in expand(pattern[: m.start()] + alt + pattern[m.end():])]


def exists(base: pathlib.Path, target: str) -> bool:
    for p in expand(target):
        if "*" in p:
            if not list(base.glob(p)):
                return False
        elif not (base / p).exists():
            return False
    return True


def broken_links() -> List[str]:
    bad: List[str] = []
    for f in repo_files():
        rel = f.relative_to(REPO).as_posix()
        if rel == SELF:
            continue  # its own tests name missing files on purpose
        is_md = f.suffix == ".md"
        in_fence = False
        for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if is_md:
                if FENCE.match(line):
                    in_fence = not in_fence
                if not in_fence:
                    for m in MD_LINK.finditer(line):
                        target = m.group(1)
                        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                            continue  # http:, https:, mailto:
                        path, _, anchor = target.partition("#")
                        dest = (f.parent / path).resolve() if path else f
                        if not dest.exists():
                            bad.append(f"{rel}:{n}: link to a missing file: {target}")
                        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                            bad.append(f"{rel}:{n}: link to a missing heading: {target}")
            if "docs/" not in line and "examples/" not in line and "scripts/" not in line:
                continue
            for m in MENTION.finditer(line):
                target = m.group(1).rstrip(".,")
                if not exists(REPO, target):
                    bad.append(f"{rel}:{n}: names a missing file: {target}")
    return bad


@cache
def sections(path: pathlib.Path) -> Set[str]:
    """Slugs of the headings and of the bold run-in labels of a Markdown file."""
    text = path.read_text(encoding="utf-8")
    bold = re.findall(r"^[ \t]*(?:[*-][ \t]+)?\*\*([^*\n]+?)\.?\*\*", text, re.M)
    return anchors(path) | {slug(b) for b in bold}


def broken_citations() -> List[str]:
    bad: List[str] = []
    md_names = {p.name for p in repo_files() if p.suffix == ".md"} | MD_MADE_ELSEWHERE
    for f in repo_files():
        rel = f.relative_to(REPO).as_posix()
        if rel == SELF:
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        for m in CITATION.finditer(text):
            n = text.count("\n", 0, m.start()) + 1
            dest = REPO / m.group(1)
            for section in filter(None, (m.group(2), m.group(3))):
                if not dest.is_file():
                    bad.append(f"{rel}:{n}: cites a section of a missing file: {m.group(1)}")
                elif slug(section) not in sections(dest):
                    bad.append(f"{rel}:{n}: cites a missing section: {m.group(1)}, \"{section}\"")
        for n, line in enumerate(text.splitlines(), 1):
            for m in MD_NAME.finditer(line):
                if m.group(1) not in md_names:
                    bad.append(f"{rel}:{n}: names a Markdown file that is not in the repository: {m.group(1)}")
    return bad


def test_every_section_citation_and_markdown_name_resolves() -> None:
    bad = broken_citations()
    assert not bad, f"{len(bad)} broken citations:\n" + "\n".join(bad)


def test_every_link_and_path_mention_resolves() -> None:
    bad = broken_links()
    assert not bad, f"{len(bad)} broken links:\n" + "\n".join(bad)


def test_the_checker_finds_what_it_should() -> None:
    assert slug("Schema changes while writing") == "schema-changes-while-writing"
    assert slug("The callback contract (C1-C12)") == "the-callback-contract-c1-c12"
    assert slug("`make docs`: the site") == "make-docs-the-site"
    assert expand("bench/x-{1,2}.txt") == ["bench/x-1.txt", "bench/x-2.txt"]
    assert exists(REPO, "docs/callback-contract.md")
    assert not exists(REPO, "docs/design.md")
    assert exists(REPO, "docs/*.md")
    assert not exists(REPO, "docs/{callback-contract,nothing}.md")
    assert MENTION.findall("see docs/design.md, and `scripts/docs.sh`.") == ["docs/design.md", "scripts/docs.sh`"[:-1]]
    assert "architecture.md" in {p.name for p in repo_files()}
    cite = "see docs/wire-format.md,\n//! \"Bucketing\" and \"Key encoding\"; docs/x.md, \"<section>\""
    assert [m.groups() for m in CITATION.finditer(cite)] == [("docs/wire-format.md", "Bucketing", "Key encoding")]
    assert "per-partition-bucket-counts" in sections(REPO / "docs/architecture.md")
    assert "python-interpreter-exit" in sections(REPO / "docs/callback-contract.md")
    assert "bucketing" not in sections(REPO / "docs/callback-contract.md")
    assert MD_NAME.findall("see protocol-notes.md section 5.1, docs/architecture.md") == ["protocol-notes.md"]
