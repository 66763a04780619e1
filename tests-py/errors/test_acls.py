"""The ACL admin API on the embedded engine: the values are built and checked in the core (an
unknown operation name is InvalidConfigError, a bad table path InvalidTableError, a wrong type
TypeError), all before any request; a well-formed call reaches the engine, which has no
authorizer and answers SECURITY_DISABLED_EXCEPTION (47). The cluster side is in
tests-py/cluster/test_sasl.py."""

from __future__ import annotations

from typing import Any

import fluss_writer as fw
import pytest

SECURITY_DISABLED = 47


def test_values_are_plain_and_compare_by_content() -> None:
    t = fw.AclResource.table("db.t")
    assert (t.type, t.name) == ("TABLE", "db.t")
    assert t == fw.AclResource.table(("db", "t")) == fw.AclResource.table(fw.TablePath("db", "t"))
    assert (fw.AclResource.cluster().type, fw.AclResource.cluster().name) == ("CLUSTER", "fluss-cluster")
    assert (fw.AclResource.database("db").type, fw.AclResource.database("db").name) == ("DATABASE", "db")
    assert fw.AclResource.database("db") != fw.AclResource.cluster()
    b = fw.AclBinding(t, "alice", "write")
    assert (b.resource, b.principal, b.operation, b.host, b.principal_type) == (t, "alice", "WRITE", "*", "User")
    assert b == fw.AclBinding(t, "alice", "WRITE", host="*", principal_type="User")
    assert b != fw.AclBinding(t, "alice", "READ")
    assert len({b, fw.AclBinding(t, "alice", "Write")}) == 1
    assert "alice" in repr(b) and "WRITE" in repr(b)
    f = fw.AclFilter()
    assert (f.resource, f.principal, f.host, f.operation) == (None, None, None, "ANY")
    f = fw.AclFilter(resource=t, principal="alice", operation="describe")
    assert (f.resource, f.principal, f.operation) == (t, "alice", "DESCRIBE")


def test_operation_names_are_parsed_by_the_core_in_any_case() -> None:
    t = fw.AclResource.cluster()
    for name in ["ANY", "ALL", "READ", "WRITE", "CREATE", "DROP", "ALTER", "DESCRIBE"]:
        assert fw.AclBinding(t, "u", name.lower()).operation == name
    # Surrounding blanks are trimmed by the core's parser.
    assert fw.AclBinding(t, "u", " write ").operation == "WRITE"


@pytest.mark.parametrize("op", ["WRTE", "", "allow", "ÄNY", "WRITE,READ"])
def test_unknown_operation_names_are_refused_by_the_core(op: str) -> None:
    t = fw.AclResource.cluster()
    with pytest.raises(fw.InvalidConfigError) as info:
        fw.AclBinding(t, "u", op)
    assert "unknown ACL operation" in str(info.value)
    with pytest.raises(fw.InvalidConfigError):
        fw.AclFilter(operation=op)


@pytest.mark.parametrize(
    "make",
    [
        lambda: fw.AclBinding(fw.AclResource.cluster(), "u", 4),
        lambda: fw.AclBinding("db.t", "u", "WRITE"),
        lambda: fw.AclBinding(fw.AclResource.cluster(), None, "WRITE"),
        lambda: fw.AclFilter(resource="db"),
        lambda: fw.AclFilter(operation=b"WRITE"),
        lambda: fw.AclResource.database(3),
    ],
)
def test_wrong_types_are_type_errors(make: Any) -> None:
    with pytest.raises(TypeError):
        make()


def test_bad_table_path_is_invalid_table() -> None:
    with pytest.raises(fw.InvalidTableError):
        fw.AclResource.table("no_dot")


def test_acl_calls_on_the_embedded_engine_answer_security_disabled(conn: fw.Connection) -> None:
    admin = conn.admin()
    acl = fw.AclBinding(fw.AclResource.table("fluss.t"), "alice", "WRITE")
    calls = [
        lambda: admin.create_acls([acl]),
        lambda: admin.list_acls(),
        lambda: admin.list_acls(fw.AclFilter(principal="alice")),
        lambda: admin.drop_acls([fw.AclFilter()]),
    ]
    for call in calls:
        with pytest.raises(fw.ServerError) as info:
            call()
        assert info.value.code == SECURITY_DISABLED, info.value
        assert not info.value.retriable


def test_admin_methods_refuse_wrong_argument_types_before_any_request(conn: fw.Connection) -> None:
    admin = conn.admin()
    for call in [
        lambda: admin.create_acls([fw.AclFilter()]),
        lambda: admin.create_acls(["alice"]),
        lambda: admin.list_acls("alice"),
        lambda: admin.drop_acls([fw.AclBinding(fw.AclResource.cluster(), "u", "ALL")]),
        lambda: admin.drop_acls(fw.AclFilter()),
    ]:
        # Not SECURITY_DISABLED: the call never reached the engine.
        with pytest.raises(TypeError):
            call()
