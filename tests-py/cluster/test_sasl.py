"""SASL/PLAIN from Python against the cluster whose client listener requires it
(``FLUSS_SASL_BOOTSTRAP_SERVERS``, started by scripts/test-all.sh; users ``admin`` (super user)
and ``fluss``). The keys are the core's, passed through unchanged: the same as in Rust and C++.
"""

from __future__ import annotations

import logging
import os
import time
import uuid

import fluss_writer as fw
import pytest

from .support import create_table

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
        schema = fw.Schema([("id", "BIGINT", False), ("msg", "STRING")])
        path = create_table(conn, lambda: f"fw_sasl.py_{uuid.uuid4().hex[:10]}", fw.TableDescriptor(schema, bucket_count=1))
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


USER_PASSWORD = "fluss-secret"
AUTHORIZATION_EXCEPTION = 48


def test_acls_from_python_grant_write_to_a_user_who_could_not_write(sasl_bootstrap: str) -> None:
    """A user without WRITE: every callback fails once with AUTHORIZATION_EXCEPTION; WRITE
    granted through the Python admin API lets a new writer write; list and drop see the ACLs."""
    with fw.connect(sasl_bootstrap, sasl("admin", ADMIN_PASSWORD)) as admin_conn:
        admin = admin_conn.admin()
        admin.create_database("fw_sasl", ignore_if_exists=True)
        schema = fw.Schema([("id", "BIGINT", False), ("msg", "STRING")])
        path = create_table(admin_conn, lambda: f"fw_sasl.py_acl_{uuid.uuid4().hex[:10]}",
                            fw.TableDescriptor(schema, bucket_count=1))
        table = fw.AclResource.table(path)
        mine = fw.AclFilter(resource=table)
        admin.create_acls([fw.AclBinding(table, "fluss", "READ")])
        assert admin.list_acls(mine) == [fw.AclBinding(table, "fluss", "READ")]

        with fw.connect(sasl_bootstrap, sasl("fluss", USER_PASSWORD)) as user:
            # Without WRITE: create_writer may be refused at once, or every callback fails once.
            try:
                w = user.get_table(path).new_append().create_writer()
            except fw.ServerError as e:
                assert e.code == AUTHORIZATION_EXCEPTION, e
            else:
                seen: list[BaseException | None] = []
                with w:
                    for i in range(3):
                        w.append({"id": i, "msg": "denied"}, callback=lambda c: seen.append(c.error))
                    started = time.monotonic()
                    w.flush(timeout=40)
                assert len(seen) == 3, seen
                for err in seen:
                    assert isinstance(err, fw.ServerError), err
                    assert err.code == AUTHORIZATION_EXCEPTION and not err.retriable, err
                assert time.monotonic() - started < 20, "not retried until the delivery timeout"

            admin.create_acls([fw.AclBinding(table, "fluss", "WRITE")])
            assert sorted(b.operation for b in admin.list_acls(mine)) == ["READ", "WRITE"]
            # Servers learn of a new ACL asynchronously: retry the refusal for a while.
            granted = time.monotonic()
            while True:
                try:
                    with user.get_table(path).new_append().create_writer() as w:
                        c = w.append({"id": 42, "msg": "granted"}).wait(30)
                    if c.error is not None:
                        raise c.error
                    break
                except fw.ServerError as e:
                    if e.code != AUTHORIZATION_EXCEPTION or time.monotonic() - granted > 20:
                        raise
                    time.sleep(0.2)

        rows = admin_conn.get_table(path).scan(0)
        assert [r.row for r in rows] == [(42, "granted")]
        dropped = admin.drop_acls([mine])
        assert sorted(b.operation for b in dropped) == ["READ", "WRITE"]
        assert all(b.principal == "fluss" and b.resource == table for b in dropped)
        assert admin.list_acls(mine) == []


def test_a_normal_user_cannot_manage_acls(sasl_bootstrap: str) -> None:
    with fw.connect(sasl_bootstrap, sasl("fluss", USER_PASSWORD)) as user:
        with pytest.raises(fw.ServerError) as info:
            user.admin().create_acls([fw.AclBinding(fw.AclResource.cluster(), "fluss", "ALL")])
        assert info.value.code == AUTHORIZATION_EXCEPTION, info.value
