"""A disk with no room: DuckDB connections of a ``Store`` whose chosen writes fail as they do on a full
disk, for the tests of what a run leaves behind (in-process, or imported by a patched CLI process)."""

from __future__ import annotations

from equilens.tasks.storage.store import Store

NO_SPACE = {  # what DuckDB raises when the disk has no room for the write-ahead log
    "TransactionException": 'TransactionContext Error: Failed to commit: Could not write file "{wal}": '
                            "No space left on device",
    "IOException": 'IO Error: Could not write file "{wal}": No space left on device'}


class _Refusing:
    """A DuckDB connection whose writes matching ``refuse(sql)`` fail as on a full disk (the exception class
    ``refuse`` names, with DuckDB's message)."""

    def __init__(self, con, refuse, wal: str) -> None:
        self._con, self._refuse, self._wal = con, refuse, wal

    def __getattr__(self, name: str):
        return getattr(self._con, name)

    def execute(self, sql: str, *params):
        kind = self._refuse(sql)
        if kind:
            import duckdb

            raise getattr(duckdb, kind)(NO_SPACE[kind].format(wal=self._wal))
        return self._con.execute(sql, *params)


def full_disk(monkeypatch, refuse) -> None:
    """Make every ``Store`` write whose SQL ``refuse(sql)`` names an exception class (``"IOException"``,
    ``"TransactionException"``) fail as DuckDB fails on a full disk; ``monkeypatch``: anything with
    pytest's ``setattr(owner, name, value)``."""
    from contextlib import contextmanager

    real = Store.connect

    @contextmanager
    def connect(self: Store, read_only: bool = False):
        with real(self, read_only) as con:
            yield con if read_only else _Refusing(con, refuse, f"{self.path}.wal")

    monkeypatch.setattr(Store, "connect", connect)
