"""Shared fixtures: an embedded connection per test, a log table, the engine, a recorder."""

from __future__ import annotations

from typing import Iterator

import fluss_writer as fw
import pytest
from fluss_writer import testing
from helpers import Recorder, make_table


@pytest.fixture
def conn() -> Iterator[fw.Connection]:
    c = fw.connect("embedded", {"client.writer.batch-timeout": "5ms", "client.writer.retry-backoff": "5ms"})
    yield c
    c.close(timeout=10)


@pytest.fixture
def log_table(conn: fw.Connection) -> str:
    return make_table(conn, buckets=1)


@pytest.fixture
def engine(conn: fw.Connection) -> testing.EmbeddedEngine:
    return testing.engine(conn)


@pytest.fixture
def rec() -> Recorder:
    return Recorder()
