"""One version everywhere: ``fluss_writer.__version__``, the installed distribution's metadata and
``[workspace.package] version`` in Cargo.toml (where it is set) are the same; under
``tests-py/run.sh`` the module under test is the installed wheel, not the source tree."""

from __future__ import annotations

import importlib.metadata
import os
import pathlib
import re

import fluss_writer as fw

REPO = pathlib.Path(__file__).resolve().parent.parent


def cargo_version() -> str:
    text = REPO.joinpath("Cargo.toml").read_text(encoding="utf-8")
    section = text.split("[workspace.package]", 1)[1].split("\n[", 1)[0]
    m = re.search(r'^version = "([^"]+)"$', section, re.M)
    assert m, "no version in Cargo.toml's [workspace.package]"
    return m.group(1)


def test_version_is_cargo_version() -> None:
    assert fw.__version__ == cargo_version()
    assert fw.__version__ == fw._native.__version__


def test_version_is_distribution_version() -> None:
    assert importlib.metadata.version("fluss-writer") == fw.__version__


def test_module_under_test_is_the_installed_wheel() -> None:
    expected = os.environ.get("FLUSS_WRITER_EXPECT_INSTALLED")
    if not expected:
        return  # a development build (maturin develop): nothing to check
    assert expected == fw.__version__
    module = pathlib.Path(fw._native.__file__).resolve()
    assert "site-packages" in module.parts, module
    assert REPO.joinpath("python") not in module.parents, f"{module} is the source tree's package, not an installed wheel"
    # An installed wheel records its files; an editable install records none of the module.
    files = importlib.metadata.files("fluss-writer") or []
    assert any(str(f).endswith("_native.abi3.so") for f in files), files
