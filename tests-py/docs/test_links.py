"""Links inside the repository lead somewhere.

* Every relative Markdown link ``[text](path)`` / ``[text](path#anchor)`` in a ``*.md`` file names
  a file or folder that exists (relative to the Markdown file), and an anchor into a Markdown file
  names one of its headings (GitHub's rule: lower case, punctuation dropped, spaces to ``-``).
* Every mention of a repository path under ``docs/``, ``examples/`` or ``scripts/`` in Markdown,
  Rust, C++ and Python sources (``see docs/callback-contract.md``) names a file that exists
  (relative to the repository root; ``*`` and ``{a,b}`` patterns must match something).

Files are the ones git knows (tracked and untracked, ignored ones left out).
"""

from __future__ import annotations

import pathlib
import re
import subprocess
from functools import cache
from typing import List, Set

REPO = pathlib.Path(__file__).resolve().parents[2]
SOURCE_EXTS = (".md", ".rs", ".hpp", ".h", ".cpp", ".py", ".pyi", ".sh", ".toml", ".txt")
SKIP_DIRS = {"target", "dist", "node_modules", "site", "build"}

MD_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
MENTION = re.compile(r"(?<![\w./-])((?:docs|examples|scripts)/[\w.*{},/-]*[\w*}])")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
SELF = "tests-py/docs/test_links.py"


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
