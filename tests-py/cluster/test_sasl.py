"""SASL/PLAIN from Python against the cluster whose client listener requires it
(``FLUSS_SASL_BOOTSTRAP_SERVERS``, started by scripts/test-all.sh; users ``admin`` (super user)
and ``fluss``). The keys are the core's, passed through unchanged: the same as in Rust and C++.
"""

from __future__ import annotations

import logging
import os
import uuid

import fluss_writer as fw
import pytest

ADMIN_PASSWORD = "admin-secret"
WRONG_PASSWORD = "py-wrong-password-0815"
AUTHENTICATE_EXCEPTION = 46


@pytest.fixture(scope="module")
def sasl_bootstrap() -> str:
    b = os.environ.get("FLUSS_SASL_BOOTSTRAP_SERVERS", "")
    if not b:
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail("FLUSS_SASL_BOOTSTRAP_SERVERS is not set but CI=true: the SASL tests must run")
        pytest.skip("FLUSS_SASL_BOOTSTRAP_SERVERS is not set (scripts/test-all.sh starts the SASL cluster)")
    return b


def sasl(user: str, password: str) -> dict[str, str]:
    return {
        "client.security.protocol": "SASL",
        "client.security.sasl.username": user,
        "client.security.sasl.password": password,
        "client.request-timeout": "10s",
        "client.writer.batch-timeout": "5ms",
    }


def test_sasl_plain_writes_and_reads_back(sasl_bootstrap: str) -> None:
    with fw.connect(sasl_bootstrap, sasl("admin", ADMIN_PASSWORD)) as conn:
        conn.admin().create_database("fw_sasl", ignore_if_exists=True)
        path = f"fw_sasl.py_{uuid.uuid4().hex[:10]}"
        schema = fw.Schema([("id", "BIGINT", False), ("msg", "STRING")])
        conn.admin().create_table(path, fw.TableDescriptor(schema, bucket_count=1))
        with conn.get_table(path).new_append().create_writer() as w:
            for i in range(50):
                w.append({"id": i, "msg": f"m{i}"})
            w.flush()
        rows = conn.get_table(path).scan(0)
        assert [r.row[0] for r in rows] == list(range(50))


def test_wrong_password_is_a_clear_error_that_never_shows_the_password(
    sasl_bootstrap: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with pytest.raises(fw.FlussWriterError) as info:
        fw.connect(sasl_bootstrap, sasl("admin", WRONG_PASSWORD))
    e = info.value
    assert e.code == AUTHENTICATE_EXCEPTION, e
    assert not e.retriable
    assert "admin" in str(e)
    shown = " ".join([str(e), repr(e), e.message, caplog.text])
    assert WRONG_PASSWORD not in shown

