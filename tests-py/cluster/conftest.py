"""Fixtures of the tests against a real Fluss cluster (``FLUSS_BOOTSTRAP_SERVERS``).

The directory is collected only when FLUSS_BOOTSTRAP_SERVERS is set (see tests-py/conftest.py);
under CI=true without it, ``test_cluster_required`` fails instead.
"""

from __future__ import annotations

import os
import uuid
from typing import Iterator, List

import fluss_writer as fw
import pytest

from .support import connect, create_database

#: Client settings for tests: short batching, generous timeouts for a loaded shared cluster.
CLUSTER_CONFIG = {
    "client.writer.batch-timeout": "5ms",
    "client.request-timeout": "20s",
    "client.writer.delivery-timeout": "45s",
}


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module")
def bootstrap() -> str:
    b = os.environ.get("FLUSS_BOOTSTRAP_SERVERS", "")
    assert b, "FLUSS_BOOTSTRAP_SERVERS must be set for tests-py/cluster"
    return b


@pytest.fixture(scope="module")
def cluster_conn(bootstrap: str) -> Iterator[fw.Connection]:
    c = connect(bootstrap, CLUSTER_CONFIG)
    yield c
    c.close(timeout=20)


@pytest.fixture(scope="module")
def cluster_db(cluster_conn: fw.Connection, cluster_databases: List[str]) -> str:
    """A database of its own per module (the cluster is shared); dropped at the session's end
    (``cluster_databases`` in tests-py/conftest.py)."""
    db = unique("fw_py")
    create_database(cluster_conn, db)
    cluster_databases.append(db)
    return db
