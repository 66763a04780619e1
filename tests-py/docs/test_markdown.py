"""Every Python block of the Markdown documentation runs, as written.

Collects each fenced Python block of README.md, docs/**/*.md, examples/**/*.md and every other
Markdown file of the repository; each is one
test (id ``file:line``) that executes the block in a fresh namespace (``__name__ == "__main__"``)
with a fresh temporary working directory.

The fence's info string says how a block runs:

* ```` ```python ````: on its own, as written (the embedded engine, nothing else needed);
* ```` ```python continued ````: after the blocks before it in the same file up to the last one
  that is not ``continued`` (they run first, in one namespace; the guides build on earlier blocks);
* ```` ```python cluster ````: against the real cluster at ``FLUSS_BOOTSTRAP_SERVERS`` (the block
  reads the address from that variable); ```` ```python sasl ````: against the SASL/PLAIN cluster at
  ``FLUSS_SASL_BOOTSTRAP_SERVERS`` (user ``FLUSS_SASL_USERNAME``, password ``FLUSS_SASL_PASSWORD``;
  the test cluster's admin unless set). Without the address these are skipped, loudly; under
  CI=true a missing address is a failure;
* ```` ```python no-run ````: not run (an excerpt that cannot stand alone); kept to very few
  (``MAX_NO_RUN``), checked below.

Any other info string on a Python fence (or ``py``, ``python3``) fails ``test_every_python_block_is_run``:
no Python block is left unmarked and unrun.
"""

from __future__ import annotations

import os
import pathlib
import re
from dataclasses import dataclass
from typing import Dict, List, Optional

import fluss_writer as fw
import pytest
from cluster.support import connect, coordinator_restarting, note_retry

REPO = pathlib.Path(__file__).resolve().parents[2]
ROOTS = ["README.md", "docs", "examples"]
MODES = {"", "continued", "cluster", "sasl", "no-run"}
PY_LANGS = {"python", "py", "python3", "pycon", "ipython"}
MAX_NO_RUN = 3
CI = os.environ.get("CI", "").lower() in ("true", "1")

#: The SASL test cluster's admin (scripts/test-all.sh starts it; tests-py/cluster/test_sasl.py).
SASL_DEFAULTS = {"FLUSS_SASL_USERNAME": "admin", "FLUSS_SASL_PASSWORD": "admin-secret"}

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")


@dataclass
class Block:
    file: str  # relative to the repository
    line: int  # 1-based line of the opening fence
    lang: str
    mode: str  # the rest of the info string
    code: str

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"


def markdown_files() -> List[pathlib.Path]:
    """README.md, docs/ and examples/ first, then every other Markdown file of the repository
    (build output, virtual environments and other hidden folders left out)."""
    files: List[pathlib.Path] = []
    for root in ROOTS:
        p = REPO / root
        if p.is_file():
            files.append(p)
        elif p.is_dir():
            files.extend(sorted(p.rglob("*.md")))
    skip = {"target", "dist", "node_modules"}
    for top, dirs, names in os.walk(REPO):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build")) and d not in skip)
        for n in sorted(names):
            p = pathlib.Path(top) / n
            if n.endswith(".md") and p not in files:
                files.append(p)
    return files


def parse(path: pathlib.Path, rel: Optional[str] = None) -> List[Block]:
    """The fenced code blocks of one Markdown file (CommonMark fences, indented ones included:
    the fence's indentation is removed from the block's lines)."""
    rel = rel or path.relative_to(REPO).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: List[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group("indent"), m.group("fence"), m.group("info").strip()
        words = info.split(None, 1)
        lang = words[0].lower() if words else ""
        mode = words[1].strip() if len(words) > 1 else ""
        body: List[str] = []
        j = i + 1
        while j < len(lines):
            stripped = lines[j].strip()
            if stripped.startswith(fence[0] * len(fence)) and stripped.strip(fence[0]) == "":
                break
            line = lines[j]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            j += 1
        blocks.append(Block(rel, i + 1, lang, mode, "\n".join(body) + "\n"))
        i = j + 1
    return blocks


def python_blocks() -> List[Block]:
    return [b for f in markdown_files() for b in parse(f) if b.lang in PY_LANGS]


ALL = python_blocks()
RUNNABLE = [b for b in ALL if b.lang == "python" and b.mode in MODES - {"no-run"}]


def chain(block: Block) -> List[Block]:
    """The blocks that run for ``block``: itself, after the ones it continues."""
    same_file = [b for b in RUNNABLE if b.file == block.file and b.line <= block.line]
    out = [same_file[-1]]
    k = len(same_file) - 1
    while out[0].mode == "continued":
        k -= 1
        assert k >= 0, f"{block.id}: a `python continued` block with no block before it"
        out.insert(0, same_file[k])
    return out


def need_env(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        msg = f"{name} is not set: this documentation block needs a real Fluss cluster"
        if CI:
            pytest.fail(f"CI=true but {msg} (scripts/test-all.sh starts it)", pytrace=False)
        pytest.skip(msg)
    return value


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.id for b in RUNNABLE])
def test_block_runs(block: Block, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = chain(block)
    modes = {b.mode for b in blocks}
    if "cluster" in modes:
        need_env("FLUSS_BOOTSTRAP_SERVERS")
    if "sasl" in modes:
        need_env("FLUSS_SASL_BOOTSTRAP_SERVERS")
        for k, v in SASL_DEFAULTS.items():
            if not os.environ.get(k):
                monkeypatch.setenv(k, v)
    monkeypatch.chdir(tmp_path)

    def run() -> None:
        namespace: Dict[str, object] = {"__name__": "__main__"}
        for b in blocks:
            # Padded so that a traceback names the Markdown file's own line numbers.
            code = compile("\n" * b.line + b.code, str(REPO / b.file), "exec")
            exec(code, namespace)  # noqa: S102 - the documentation's own code

    if not modes & {"cluster", "sasl"}:
        run()
        return
    # On a cluster: a block that met the coordinator restarting (scripts/fluss-cluster.sh
    # heal-watch restarts a Fluss 0.9.1 coordinator that lost a table, refused for some seconds)
    # runs again once it answers, and the run's summary says so. The blocks are written to be run
    # again (tables made with ignore_if_exists, nothing counted across runs).
    try:
        run()
    except fw.FlussWriterError as e:
        if not coordinator_restarting(e):
            raise
        bootstrap = os.environ["FLUSS_SASL_BOOTSTRAP_SERVERS" if "sasl" in modes else "FLUSS_BOOTSTRAP_SERVERS"]
        note_retry(f"{block.id}: {e}; running the block again once the coordinator at {bootstrap} answers")
        config = {}
        if "sasl" in modes:
            config = {"client.security.protocol": "SASL", "client.security.sasl.mechanism": "PLAIN",
                      "client.security.sasl.username": os.environ["FLUSS_SASL_USERNAME"],
                      "client.security.sasl.password": os.environ["FLUSS_SASL_PASSWORD"]}
        connect(bootstrap, config).close()
        run()


def test_every_python_block_is_run() -> None:
    """No Python block escapes: each is ```python with a known mode, and ```python no-run stays rare."""
    bad: List[str] = []
    for b in ALL:
        if b.lang != "python":
            bad.append(f"{b.id}: fence `{b.lang}`: write ```python (with a mode if needed)")
        elif b.mode not in MODES:
            bad.append(f"{b.id}: unknown mode `{b.mode}` (one of {sorted(MODES - {''})}, or none)")
    assert not bad, "\n".join(bad)
    no_run = [b.id for b in ALL if b.mode == "no-run"]
    assert len(no_run) <= MAX_NO_RUN, f"too many ```python no-run blocks ({len(no_run)} > {MAX_NO_RUN}): {no_run}"
    assert RUNNABLE, "no Python blocks found in the documentation"


def test_parser_sees_fences_as_written(tmp_path: pathlib.Path) -> None:
    """The collector itself: info strings, indented fences, both fence characters."""
    sample = tmp_path / "sample.md"
    text = (
        "x\n```python\na = 1\n```\n"
        "  ```python continued\n  b = a + 1\n  ```\n"
        "~~~python no-run\nnot python\n~~~\n"
        "```sh\necho\n```\n"
    )
    sample.write_text(text, encoding="utf-8")
    blocks = parse(sample, "sample.md")
    got = [(b.line, b.lang, b.mode, b.code) for b in blocks]
    assert got == [
        (2, "python", "", "a = 1\n"),
        (5, "python", "continued", "b = a + 1\n"),
        (8, "python", "no-run", "not python\n"),
        (11, "sh", "", "echo\n"),
    ]

