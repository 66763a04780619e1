"""Where a test runs: the ``target`` fixture (a plugin of conftest.py) is the embedded engine and,
with FLUSS_BOOTSTRAP_SERVERS set, the real Fluss 0.9.1 cluster too (one database per test
module). Test modules import ``Target`` for their annotations."""

from __future__ import annotations

import os
import uuid
from typing import Iterator, List

import fluss_writer as fw
import pytest
from cluster.support import create_table

CLUSTER_BOOTSTRAP = os.environ.get("FLUSS_BOOTSTRAP_SERVERS", "")
CONFIG = {"client.writer.batch-timeout": "5ms", "client.request-timeout": "20s", "client.writer.delivery-timeout": "45s"}


class Target:
    def __init__(self, kind: str, conn: fw.Connection, db: str) -> None:
        self.kind, self.conn, self.db = kind, conn, db

    def create(self, prefix: str, descriptor: fw.TableDescriptor) -> str:
        def new_path() -> str:
            return f"{self.db}.{prefix}_{uuid.uuid4().hex[:10]}"

        if self.kind == "cluster":
            return create_table(self.conn, new_path, descriptor)
        path = new_path()
        self.conn.admin().create_table(path, descriptor)
        return path


@pytest.fixture(scope="module")
def cluster_target(cluster_databases: List[str]) -> Iterator[Target]:
    c = fw.connect(CLUSTER_BOOTSTRAP, CONFIG)
    db = f"fw_py_{uuid.uuid4().hex[:10]}"
    c.admin().create_database(db)
    cluster_databases.append(db)
    yield Target("cluster", c, db)
    c.close(timeout=20)


@pytest.fixture(params=["embedded", *(["cluster"] if CLUSTER_BOOTSTRAP else [])])
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    if request.param == "cluster":
        yield request.getfixturevalue("cluster_target")
        return
    c = fw.connect("embedded", CONFIG)
    yield Target("embedded", c, "fluss")
    c.close(timeout=10)
