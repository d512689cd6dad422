"""Every test under tests/reliability carries the ``reliability`` marker (``pytest -m reliability``)."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/reliability/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.reliability)
