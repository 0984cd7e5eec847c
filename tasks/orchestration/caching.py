"""How the cached stages store their results: Prefect's result storage, each result as its plain
pickle with its record (serializer, where the bytes are) in a folder of its own, nothing kept in memory.

Prefect's defaults cost a large result several times its size while it is written: the pickle is
base64-encoded by the serializer and again placed, as text, inside a JSON record with its metadata,
so the pickle, its base64 text, the JSON text and its bytes were all in memory at once (the variants
of 100,000 prompts: a 306 MB pickle, 1.75 GB more resident while it was written). Stored apart and
unencoded, only the pickle is. A cache lookup then reads the small record, not the whole result (with
the record inside the result, Prefect read and unpickled a result once to see that it exists and
again to use it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from prefect.cache_policies import CompoundCachePolicy
from prefect.serializers import Serializer

CACHE_KEYS = "cache-keys"
"""The folder, inside Prefect's local result storage, that holds the cached results' records."""


class PlainPickle(Serializer):
    """cloudpickle's bytes as they are (Prefect's ``pickle`` serializer stores them as base64 text)."""

    type: Literal["equilens-plain-pickle"] = "equilens-plain-pickle"

    def dumps(self, obj: Any) -> bytes:  # any task result
        import cloudpickle

        return cloudpickle.dumps(obj)

    def loads(self, blob: bytes) -> Any:
        import cloudpickle

        return cloudpickle.loads(blob)


class KeysApart(CompoundCachePolicy):
    """A cache policy whose records live apart from the results (Prefect's ``key_storage``), so a
    result's file holds its serializer's bytes alone. The records follow Prefect's local storage path
    as it is when a task runs (a setting, an environment variable or a profile may change it after
    this module is imported), beside the results they describe."""

    @property
    def key_storage(self) -> Path:  # type: ignore[override]
        from prefect.settings import get_current_settings

        return Path(get_current_settings().results.local_storage_path) / CACHE_KEYS

    @key_storage.setter
    def key_storage(self, _: Any) -> None:  # the dataclass's __init__ assigns the field; the path is derived
        pass


def cached(policy: Any) -> dict[str, Any]:  # a Prefect cache policy
    """The options of a task whose result is cached under ``policy``: persisted as a plain pickle with
    its record apart, and not also kept in memory (Prefect's default keeps every persisted result in
    the flow's result store until the flow ends, so a stage's output, the variants: ~1 GB at 100,000
    prompts, stayed resident under every later stage after the flow had let it go)."""
    return dict(cache_policy=KeysApart(policies=[policy]), result_serializer=PlainPickle(),
                persist_result=True, cache_result_in_memory=False)
