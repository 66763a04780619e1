"""Under CI=true the tests against a real cluster must run: without FLUSS_BOOTSTRAP_SERVERS this
module holds one failing test (and the rest of tests-py/cluster is not collected)."""

from __future__ import annotations

import os

import pytest

_CI = os.environ.get("CI", "").lower() in ("true", "1")

if _CI and not os.environ.get("FLUSS_BOOTSTRAP_SERVERS"):

    def test_cluster_required() -> None:
        pytest.fail(
            "CI=true but FLUSS_BOOTSTRAP_SERVERS is not set: the Python tests against a real Fluss 0.9.1 cluster "
            "(tests-py/cluster and the cluster golden scenarios) are required; start one with "
            "scripts/fluss-cluster.sh start (scripts/test-all.sh does) and export the address it prints",
            pytrace=False,
        )
