"""DuckDB persistence: one file, append-only tables, short-lived connections.

Every write opens the file, writes, and closes it again, so two runs on the same file interleave
instead of failing: a connection that finds the file locked by another process waits with backoff
(up to ``lock_timeout`` seconds). Earlier runs are never rewritten; every row carries its run id.
All SQL is parametrised; DataFrames are inserted through DuckDB's replacement scans. A write that a
full disk refuses is rolled back by DuckDB and raised as :class:`DiskFullError` (nothing stored before is lost).
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
from equilens.tasks.errors import DiskFullError, StorageError
from equilens.tasks.storage.schema import TABLES

_LOCK_MARKERS = ("could not set lock", "conflicting lock", "lock on file")
_DAMAGE_MARKERS = ("corrupt", "checksum")  # DuckDB's words for a block that fails its check
RESERVE_BYTES = 256 * 1024  # kept free on the disk during a run, for its final status on a full disk
_FULL_MARKERS = ("no space left on device", "disk quota exceeded", "not enough space on the disk")  # ENOSPC, EDQUOT


class Store:
    """Handle on one DuckDB file. Cheap to create; opens connections only while working."""

    def __init__(self, path: str | Path, lock_timeout: float = 600.0) -> None:
        self.path = Path(path)
        self.lock_timeout = lock_timeout
        self._initialised = False

    @contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """Open the file, waiting with jittered backoff while another process holds the lock."""
        if read_only and not self.path.exists():
            raise StorageError(f"DuckDB file {self.path} does not exist; run an assessment first.")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.05
        while True:
            try:
                con = duckdb.connect(str(self.path), read_only=read_only)
                break
            except duckdb.IOException as err:
                msg = str(err).lower()
                if any(m in msg for m in _FULL_MARKERS):
                    raise self._full(err) from None
                if not any(m in msg for m in _LOCK_MARKERS):
                    raise StorageError(
                        f"Cannot open {self.path} as a DuckDB database: {err}. "
                        "Point storage.duckdb_path at a DuckDB file or a new path."
                    ) from None
                if time.monotonic() >= deadline:
                    raise StorageError(
                        f"{self.path} stayed locked by another process for {self.lock_timeout:.0f} s "
                        "(storage.lock_timeout). Wait for the other run or use another duckdb_path."
                    ) from None
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 2.0)
            except duckdb.Error as err:
                raise StorageError(f"Cannot open {self.path} as a DuckDB database: {err}") from None
        try:
            if not read_only and not self._initialised:
                for table, cols in TABLES.registered():
                    con.execute(f"CREATE TABLE IF NOT EXISTS {table} ({cols})")
                    _add_missing_columns(con, table)
                self._initialised = True
            yield con
        except duckdb.Error as err:
            if any(m in str(err).lower() for m in _DAMAGE_MARKERS):
                raise self._damaged(err) from None
            if any(m in str(err).lower() for m in _FULL_MARKERS):
                raise self._full(err) from None
            raise
        finally:
            con.close()

    def _damaged(self, err: Exception) -> StorageError:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        return StorageError(f"{self.path} is damaged and cannot be read ({first}). equilens neither reads nor "
                            "writes a damaged file: restore it from a backup, or point storage.duckdb_path "
                            "(or --db) at another file.")

    def _full(self, err: Exception) -> DiskFullError:
        import shutil

        try:
            usage = shutil.disk_usage(self.path.parent)
            free = f"{_size(usage.free)} free of {_size(usage.total)}"
        except OSError:
            free = "free space unknown"
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        return DiskFullError(f"{self.path} could not be written: the disk that holds it is full ({free}; {first}). "
                             "DuckDB rolled the write back, so everything stored before it is kept. Free some space "
                             "or point storage.duckdb_path (or --db) at a file on a larger disk, then run the same "
                             "command again: answers already in the response cache are not asked for again.")

    def init(self) -> None:
        with self.connect():
            pass

    def verify(self) -> None:
        """Read every column of every stored table once (DuckDB checks each block's checksum as it
        reads it), so a damaged file is refused before a run writes into it (StorageError)."""
        with self.connect(read_only=True) as con:
            tables = [t for (t,) in con.execute("SELECT table_name FROM information_schema.tables "
                                                "WHERE table_schema = 'main'").fetchall()]
            for table in tables:
                con.execute(f'SELECT count(hash(t)) FROM "{table}" t').fetchall()

    # --- writes -------------------------------------------------------------------------------
    def append(self, table: str, frame: pd.DataFrame) -> int:
        """Append rows to ``table``; columns are matched by name, missing ones become NULL."""
        if table not in TABLES:
            raise StorageError(f"Unknown table {table!r}.")
        if frame.empty:
            return 0
        frame = _jsonify(frame)
        with self.connect() as con:
            cols = ", ".join(f'"{c}"' for c in frame.columns)
            con.register("incoming", frame)
            con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM incoming")
            con.unregister("incoming")
        return len(frame)

    def start_run(self, run_id: str, **fields: Any) -> None:
        """The run's row, status running, with the process and host that run it (see :meth:`mark_abandoned`),
        and room kept on the disk for its final status (see :meth:`finish_run`). When a full disk
        refuses that row, :class:`DiskFullError` says whether a smaller one recorded the run failed."""
        fields = {"pid": os.getpid(), "host": socket.gethostname(), **fields}
        try:
            self.append("runs", pd.DataFrame([{"run_id": run_id, "status": "running", **fields}]))
        except DiskFullError as err:
            raise DiskFullError(f"{err} {self._failed_at_start(run_id, fields, err)}") from None
        try:  # written, not sparse: the disk's blocks are really taken
            self._reserve(run_id).write_bytes(b"\0" * RESERVE_BYTES)
        except OSError:  # no room even for that: the run fails at its first write anyway
            self._release(run_id)

    def _failed_at_start(self, run_id: str, fields: dict[str, Any], err: DiskFullError) -> str:
        """Record a run whose first row the disk refused as ``failed``, in a row without its config
        and versions, with the disk's error as its summary; the sentence that says what was recorded."""
        kept = {k: fields[k] for k in ("name", "flow", "started_at", "config_hash", "provider", "model", "pid", "host")
                if k in fields}
        row = {"run_id": run_id, "status": "failed", **kept, "finished_at": fields.get("started_at"),
               "summary": {"error": f"DiskFullError: {err}"[:4000]}}
        try:
            self.append("runs", pd.DataFrame([row]))
        except DiskFullError:
            return ("Nothing of this run was recorded (equilens runs does not list it): it stopped before its "
                    "first LLM call.")
        return "The run stopped before its first LLM call and is recorded failed."

    def _reserve(self, run_id: str) -> Path:
        return self.path.with_name(f".{self.path.name}.{run_id}.reserve")

    def _release(self, run_id: str) -> None:
        with suppress(OSError):
            self._reserve(run_id).unlink(missing_ok=True)

    def mark_abandoned(self) -> list[str]:
        """Runs of this host still ``running`` whose process is gone (killed, or the machine
        restarted) become ``abandoned``; returns their ids. A pid now used by a process that started
        after the run is gone too."""
        if not self.path.exists():
            return []
        rows = self.query("SELECT run_id, pid, started_at FROM runs WHERE status = 'running' AND host = ? "
                          "AND pid IS NOT NULL", [socket.gethostname()])
        gone = [r for r, pid, started in rows.itertuples(index=False) if not _still_running(int(pid), started)]
        if gone:
            try:
                with self.connect() as con:
                    con.executemany("UPDATE runs SET status = 'abandoned', finished_at = now() "
                                    "WHERE run_id = ? AND status = 'running'", [[r] for r in gone])
            except DiskFullError:  # marked by a later call that has room; the listing goes on
                return []
            for run_id in gone:
                self._release(run_id)
        return gone

    def finish_run(self, run_id: str, status: str, **fields: Any) -> None:
        """The run's final status with its timings, summary or versions.

        When a full disk refuses that write (DuckDB rolls it back), the room :meth:`start_run` kept
        is given back and smaller writes still say how the run ended: the status with ``{"error": ...}``
        as its summary (the summary's own error, else the disk's), else the status alone; ``completed``
        is recorded as ``failed``, since its summary is lost. :class:`DiskFullError` is raised unless
        the status asked for was recorded (a run ending ``failed`` or ``interrupted`` keeps the error
        it is ending with)."""
        sets = ["status = ?", "finished_at = now()"]
        params: list[Any] = [status]
        for key, value in fields.items():
            if key not in {"timings", "summary", "versions"}:
                raise StorageError(f"finish_run cannot set {key!r}")
            sets.append(f"{key} = ?")
            params.append(json.dumps(_finite(value), default=str))
        try:
            with self.connect() as con:
                con.execute(f"UPDATE runs SET {', '.join(sets)} WHERE run_id = ?", [*params, run_id])
        except DiskFullError as err:
            self._release(run_id)
            ended = status if status in ("failed", "interrupted") else "failed"
            summary = fields.get("summary")
            error = summary.get("error") if isinstance(summary, dict) and summary.get("error") else str(err)
            if not self._finish_small(run_id, ended, str(error)[:4000]) or ended != status:
                raise
        finally:
            self._release(run_id)

    def _finish_small(self, run_id: str, status: str, error: str) -> bool:
        """The smallest writes that record how a run ended on a full disk; whether one was recorded."""
        for sql, params in (
            ("UPDATE runs SET status = ?, finished_at = now(), summary = ? WHERE run_id = ?",
             [status, json.dumps({"error": error}), run_id]),
            ("UPDATE runs SET status = ? WHERE run_id = ?", [status, run_id]),
        ):
            try:
                with self.connect() as con:
                    con.execute(sql, params)
                return True
            except DiskFullError:
                continue
        return False

    def cache_put(self, rows: Sequence[dict[str, Any]]) -> None:
        """Persist successful responses as they arrive; an existing key is left as it is.

        Plain parametrised inserts rather than a registered DataFrame: this write also runs while a
        run is being interrupted, and a replacement scan cut by a signal can leave DuckDB without its
        ``pandas_scan`` function for the rest of the process, losing the answers the flush was for.
        """
        if not rows:
            return
        cols = list(dict.fromkeys(c for r in rows for c in r))
        unknown = [c for c in cols if not _is_column("response_cache", c)]
        if unknown:
            raise StorageError(f"response_cache has no column(s) {', '.join(unknown)}.")
        row_sql = f"({', '.join('?' * len(cols))})"
        with self.connect() as con:
            for start in range(0, len(rows), 500):  # one multi-row statement per 500 rows
                chunk = rows[start : start + 500]
                con.execute(
                    f"INSERT INTO response_cache ({', '.join(cols)}) VALUES {', '.join([row_sql] * len(chunk))} "
                    "ON CONFLICT (cache_key) DO NOTHING", [r.get(c) for r in chunk for c in cols])

    # --- reads --------------------------------------------------------------------------------
    def cache_get(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not keys or not self.path.exists():
            return {}
        with self.connect() as con:
            con.register("wanted", pd.DataFrame({"cache_key": list(dict.fromkeys(keys))}))
            frame = con.execute(
                "SELECT c.* FROM response_cache c JOIN wanted w USING (cache_key)"
            ).df()
        return {row["cache_key"]: row for row in frame.to_dict("records")}

    def query(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> pd.DataFrame:
        """The rows of ``sql`` with its parameters: positional (``?``) as a sequence, named (``$name``)
        as a mapping."""
        with self.connect(read_only=True) as con:
            return con.execute(sql, dict(params) if isinstance(params, Mapping) else list(params or [])).df()

    def run_config(self, run_id: str) -> dict[str, Any]:
        """The stored config of a run as a dict ({} when the run or its config is missing)."""
        frame = self.query("SELECT config FROM runs WHERE run_id = ?", [run_id])
        if frame.empty or not isinstance(frame["config"].iloc[0], str):
            return {}
        return json.loads(frame["config"].iloc[0])


def _declared(table: str) -> list[tuple[str, str]]:
    """(column, type) pairs of ``table`` as :data:`~equilens.tasks.storage.schema.TABLES` declares them."""
    out = []
    for part in TABLES.get(table).split(","):
        words = part.split()
        if len(words) >= 2 and words[0].strip('"') not in ("PRIMARY",):
            out.append((words[0].strip('"'), words[1]))
    return out


def _add_missing_columns(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """Bring a table written by an older equilens up to :data:`~equilens.tasks.storage.schema.TABLES`: each column it lacks is
    added (NULL in its old rows). Names and types come from the schema, never from data."""
    have = {r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]).fetchall()}
    for column, kind in _declared(table):
        if column not in have:
            con.execute(f'ALTER TABLE {table} ADD COLUMN "{column}" {kind}')


def _is_column(table: str, column: str) -> bool:
    """Whether ``column`` is declared in :data:`~equilens.tasks.storage.schema.TABLES` for ``table`` (names go into SQL text, so
    they must come from the schema, never from data)."""
    return re.search(rf"(^|[\s,\"]){re.escape(column)}[\s\"]", TABLES.get(table)) is not None


def _size(n: float) -> str:
    """Bytes for a person: 0 B, 812 KiB, 2.9 MiB, 41.0 GiB."""
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.1f} {unit}" if unit == "MiB" else f"{n:.0f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _finite(value: Any) -> Any:
    """NaN and infinities become null: JSON has no spelling for them."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _jsonify(frame: pd.DataFrame) -> pd.DataFrame:
    """Serialise dict/list cells to JSON text so DuckDB stores them in JSON columns."""
    text = {col: frame[col].map(lambda v: json.dumps(_finite(v), default=str) if v is not None else None)
            for col in frame.columns
            if frame[col].dtype == object and frame[col].map(lambda v: isinstance(v, (dict, list, tuple))).any()}
    return frame.assign(**text) if text else frame  # the other columns are shared, not copied


def _still_running(pid: int, started: Any) -> bool:  # a stored timestamp (naive UTC)
    """Whether ``pid`` is a live process that was already running when the run started."""
    import psutil

    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        created = proc.create_time()
    except psutil.Error:
        return False
    if pd.isna(started):
        return True
    stamp = pd.Timestamp(started)
    return created <= (stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp).timestamp() + 1.0
