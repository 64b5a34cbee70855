"""Fixtures of the cluster tests: one cluster for the package (harness.py), healed before each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.cluster.harness import Cluster, running_cluster


@pytest.fixture(scope="package")
def started_cluster() -> Iterator[Cluster]:
    with running_cluster(3) as cluster:
        yield cluster


@pytest.fixture
def cluster(started_cluster: Cluster) -> Cluster:
    """Every replica up (a test before may have stopped one)."""
    started_cluster.heal()
    return started_cluster
