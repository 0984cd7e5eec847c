"""The suite's own order: tests marked ``long`` start at the front of each worker's share."""

from __future__ import annotations

from types import SimpleNamespace

from tests.conftest import pytest_collection_modifyitems


class _Item:
    def __init__(self, name: str, long: bool) -> None:
        self.name, self.long = name, long

    def get_closest_marker(self, name: str) -> object:
        return object() if name == "long" and self.long else None

    def __repr__(self) -> str:
        return self.name


def _ordered(names: str, workers: int) -> list[str]:
    """The order of items named by ``names`` (an uppercase letter: a long test) for ``workers``."""
    items = [_Item(n, n.isupper()) for n in names]
    config = SimpleNamespace(workerinput={"workercount": workers}, getoption=lambda *_: 0)
    pytest_collection_modifyitems(config, items)  # type: ignore[arg-type]
    return [i.name for i in items]


def test_long_tests_are_dealt_to_the_front_of_each_worker_s_share() -> None:
    # 10 items over 3 workers: xdist hands out 3, then 3 (7 // 2), then 4
    got = _ordered("abcDefgHiJ", 3)
    assert got == ["D", "a", "b", "H", "c", "e", "J", "f", "g", "i"]
    shares = [got[:3], got[3:6], got[6:]]
    assert [s[0] for s in shares] == ["D", "H", "J"]


def test_one_worker_or_no_long_test_keeps_the_collection_order() -> None:
    assert _ordered("abCd", 1) == ["a", "b", "C", "d"]
    assert _ordered("abcd", 3) == ["a", "b", "c", "d"]
