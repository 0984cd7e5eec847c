"""One registry per extension point (assessments, metrics, scorers, LLM providers).

A registry maps a name to an object and refuses duplicates, so two plugins can never silently
shadow each other. A registry whose entries are declared in modules it imports (those every
assessment declares) takes a ``discover`` function, run once before the registry is first read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from equilens.tasks.errors import RegistryError

T = TypeVar("T")


class Registry(Generic[T]):
    """Name -> object mapping that refuses duplicate names and explains unknown ones."""

    def __init__(self, kind: str, discover: Callable[[], None] | None = None) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._discover = discover

    def _found(self) -> dict[str, T]:
        """The entries, after running ``discover`` once (entries it imports add themselves)."""
        if self._discover is not None:
            discover, self._discover = self._discover, None
            discover()
        return self._items

    def add(self, name: str, item: T) -> T:
        if name in self._items:
            raise RegistryError(f"{self.kind} {name!r} is already registered; names must be unique.")
        self._items[name] = item
        return item

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`."""

        def deco(item: T) -> T:
            return self.add(name, item)

        return deco

    def get(self, name: str) -> T:
        try:
            return self._found()[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "(none)"
            raise RegistryError(f"Unknown {self.kind} {name!r}. Known {self.kind}s: {known}.") from None

    def __contains__(self, name: object) -> bool:
        return name in self._found()

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._found()))

    def names(self) -> list[str]:
        return sorted(self._found())

    def items(self) -> list[tuple[str, T]]:
        return sorted(self._found().items())

    def registered(self) -> list[tuple[str, T]]:
        """(name, item) in the order they were registered: a reading order the code chose."""
        return list(self._found().items())
