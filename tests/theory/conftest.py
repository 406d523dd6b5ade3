"""Slow validation sweeps in tests/theory run only when asked for with a marker expression
(`-m slow`, or any -m that names it); a bare `pytest tests/theory` stays within its time budget.
Only items of this directory are touched (the hook sees the whole session)."""

import pathlib

import pytest

HERE = pathlib.Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    if "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow validation sweep: run with -m slow")
    for item in items:
        if "slow" in item.keywords and HERE in pathlib.Path(item.path).resolve().parents:
            item.add_marker(skip)
