"""The released wheel carries no benchmark or test hook (issue 16): ``bench_dispatch`` (cargo
feature ``bench``) and the forced panics (cargo feature ``test-hooks``) are neither importable
nor compiled into the extension module, while the embedded engine's testing API
(``fluss_writer.testing``: read-back, fault injection), a documented product feature, is there.

Under ``tests-py/run.sh`` the first test runs against each installed wheel
(FLUSS_WRITER_EXPECT_INSTALLED); the second runs in its step "test hooks" against the debug
build with ``--features test-hooks`` (FLUSS_WRITER_EXPECT_HOOKS=1) and shows that the byte scan
of the first one does find a hook that is compiled in.
"""

from __future__ import annotations

import os
import pathlib

import fluss_writer as fw
import pytest
from fluss_writer import _native, testing

#: Names (and a message) that exist in the module only when a hook is compiled in.
NATIVE_HOOKS = ("bench_dispatch", "_panic_for_test", "_panic_on_next_write")
HOOK_BYTES = (b"bench_dispatch", b"_panic_for_test", b"_panic_on_next_write", b"panic forced by")
TESTING_HOOKS = ("bench_dispatch", "panic_now", "panic_in_method", "panic_on_next_write")
#: The embedded engine's testing API, in every build.
ENGINE_API = ("inject_error", "inject_delay", "inject_drop_connection", "inject_coordinator_error", "clear_faults",
              "pending_faults", "pending_coordinator_faults", "scan", "lookup", "high_watermark", "stats")


def _module_bytes() -> bytes:
    return pathlib.Path(_native.__file__).read_bytes()


@pytest.mark.skipif(not os.environ.get("FLUSS_WRITER_EXPECT_INSTALLED"), reason="runs against the installed wheel "
                    "(tests-py/run.sh sets FLUSS_WRITER_EXPECT_INSTALLED); a development build may have the hooks")
def test_the_released_wheel_has_no_hooks() -> None:
    assert "site-packages" in pathlib.Path(_native.__file__).resolve().parts
    present = [n for n in NATIVE_HOOKS if hasattr(_native, n)]
    present += [f"Connection.{n}" for n in ("_panic_for_test",) if hasattr(fw.Connection, n)]
    present += [f"testing.{n}" for n in TESTING_HOOKS if hasattr(testing, n) or n in testing.__all__]
    assert present == [], f"hooks in the released wheel: {present}"
    data = _module_bytes()
    compiled_in = [b.decode() for b in HOOK_BYTES if b in data]
    assert compiled_in == [], f"{_native.__file__} contains {compiled_in}"
    # The embedded engine's testing API is a product feature and stays.
    with fw.connect("embedded") as conn:
        engine = testing.engine(conn)
        assert all(callable(getattr(engine, n)) for n in ENGINE_API)
        assert set(testing.__all__) == {"EmbeddedEngine", "dispatch_stats", "engine", "flush_logs"}


@pytest.mark.skipif(os.environ.get("FLUSS_WRITER_EXPECT_HOOKS") != "1", reason="runs in the step 'test hooks' of "
                    "tests-py/run.sh (a build with --features test-hooks, FLUSS_WRITER_EXPECT_HOOKS=1)")
def test_a_build_with_test_hooks_has_them_and_the_scan_sees_them() -> None:
    assert hasattr(_native, "_panic_for_test") and hasattr(fw.Connection, "_panic_for_test")
    assert {"panic_now", "panic_in_method", "panic_on_next_write"} <= set(testing.__all__)
    data = _module_bytes()
    assert b"_panic_for_test" in data and b"panic forced by" in data
    # `bench` is a separate feature, not enabled by test-hooks.
    assert not hasattr(_native, "bench_dispatch") and b"bench_dispatch" not in data
