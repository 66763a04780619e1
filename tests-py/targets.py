"""Where a test runs: the ``target`` fixture (a plugin of conftest.py) is the embedded engine and,
with FLUSS_BOOTSTRAP_SERVERS set, the real Fluss 0.9.1 cluster too (one database per test
module); ``target_1_0`` is the embedded engine and, with FLUSS_1_0_BOOTSTRAP_SERVERS set, the
Fluss 1.0-line cluster, for what 0.9.1 does not have. Test modules import ``Target`` for their
annotations."""

from __future__ import annotations

import os
import uuid
from typing import Dict, Iterator, List, Optional

import fluss_writer as fw
import pytest
from cluster.support import connect, create_database, create_table
from fluss_writer import testing

CLUSTER_BOOTSTRAP = os.environ.get("FLUSS_BOOTSTRAP_SERVERS", "")
CLUSTER_1_0_BOOTSTRAP = os.environ.get("FLUSS_1_0_BOOTSTRAP_SERVERS", "")
EMBEDDED_CONFIG = {"client.writer.batch-timeout": "5ms", "client.writer.retry-backoff": "5ms"}
CLUSTER_CONFIG = {
    "client.writer.batch-timeout": "5ms",
    "client.request-timeout": "20s",
    "client.writer.delivery-timeout": "45s",
}


class Target:
    """Where a test runs: a connection, a database of its own, and the embedded engine (None on
    a cluster)."""

    def __init__(self, kind: str, conn: fw.Connection, db: str, bootstrap: str = CLUSTER_BOOTSTRAP) -> None:
        self.kind, self.conn, self.db, self.bootstrap = kind, conn, db, bootstrap
        self.engine: Optional[testing.EmbeddedEngine] = testing.engine(conn) if kind == "embedded" else None

    def create(self, prefix: str, descriptor: fw.TableDescriptor) -> str:
        def new_path() -> str:
            return f"{self.db}.{prefix}_{uuid.uuid4().hex[:10]}"

        if self.kind == "cluster":
            return create_table(self.conn, new_path, descriptor)
        path = new_path()
        self.conn.admin().create_table(path, descriptor)
        return path

    def with_config(self, extra: Dict[str, str]) -> Target:
        """A target with its own connection configured with ``extra`` as well: to the same
        cluster (same database), or a new embedded engine."""
        if self.kind == "cluster":
            return Target("cluster", connect(self.bootstrap, {**CLUSTER_CONFIG, **extra}), self.db, self.bootstrap)
        return Target("embedded", fw.connect("embedded", {**EMBEDDED_CONFIG, **extra}), "fluss")


@pytest.fixture(scope="module")
def cluster_target(cluster_databases: List[str]) -> Iterator[Target]:
    c = connect(CLUSTER_BOOTSTRAP, CLUSTER_CONFIG)
    db = f"fw_py_{uuid.uuid4().hex[:10]}"
    create_database(c, db)
    cluster_databases.append(db)
    yield Target("cluster", c, db)
    c.close(timeout=20)


def _embedded_or(request: pytest.FixtureRequest, cluster_fixture: str) -> Iterator[Target]:
    """The target of a parametrized fixture: a fresh embedded engine, or the module's cluster."""
    if request.param != "embedded":
        yield request.getfixturevalue(cluster_fixture)
        return
    c = fw.connect("embedded", EMBEDDED_CONFIG)
    yield Target("embedded", c, "fluss")
    c.close(timeout=10)


@pytest.fixture(params=["embedded", *(["cluster"] if CLUSTER_BOOTSTRAP else [])])
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    yield from _embedded_or(request, "cluster_target")


@pytest.fixture(scope="module")
def cluster_1_0_target() -> Iterator[Target]:
    c = connect(CLUSTER_1_0_BOOTSTRAP, CLUSTER_CONFIG)
    db = f"fw_py_{uuid.uuid4().hex[:10]}"
    create_database(c, db)
    yield Target("cluster", c, db, CLUSTER_1_0_BOOTSTRAP)
    c.admin().drop_database(db, ignore_if_not_exists=True, cascade=True)
    c.close(timeout=20)


@pytest.fixture(params=["embedded", *(["cluster-1.0"] if CLUSTER_1_0_BOOTSTRAP else [])])
def target_1_0(request: pytest.FixtureRequest) -> Iterator[Target]:
    yield from _embedded_or(request, "cluster_1_0_target")
