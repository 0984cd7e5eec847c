"""The fingerprint of the code a ``python`` or ``langchain`` target runs, part of its cache key, so an
edit of the application means new calls rather than the old behaviour read back from the cache.

What it covers:

* **Source files**: the target's module, the packages above it, and every module those import by an
  ``import`` statement (anywhere in the file, a function's lazy import included), transitively,
  found by reading the source (``ast``) rather than by what this process happens to have imported.
  A module installed in ``site-packages`` / ``dist-packages`` or in the standard library is neither
  hashed nor read (an upgrade or an edit of a library is not the application changing), and neither
  is equilens itself, except the example applications it ships under ``equilens.data``. Files are
  hashed by content and named by module, never by path, so the fingerprint is the same in every
  process and on every machine while the code is unchanged.
* **Objects**: a LangChain object's serialisable configuration (``dumpd``: prompt templates, model
  name and settings; ``repr`` where LangChain has no serialisation, object addresses removed), and
  the functions and classes inside it (a ``RunnableLambda``'s function) with their modules. A
  function handed over in Python (:func:`equilens.tasks.llm.targets.hand_over`) adds its own source,
  first line, defaults and closure values; a ``functools.partial`` the function it wraps and its
  arguments; a callable instance its attributes. Values that are neither plain data nor code count
  by their type alone.

Not covered: data files the application reads, services it calls, state outside the object, and a
class or factory's product (it is not built to key a call: its module is hashed instead);
``llm.target_version`` is the override for those, and when it is set the fingerprint is not
computed at all. A target whose code cannot be read at all (a function typed at an interactive
prompt) has no fingerprint (None).

The fingerprint is computed once per process per target object (:func:`app_fingerprint`): the next
lookup returns it while the target still resolves to the same object, so a module imported again
(``importlib.reload``) is read again.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import json
import re
import site
import sys
import sysconfig
import threading
from collections.abc import Iterable
from importlib.machinery import ModuleSpec, PathFinder
from importlib.util import resolve_name
from pathlib import Path
from typing import Any

PLAIN = (str, int, float, bool, type(None))
MAX_ITEMS = 256  # items of one list or dict read into the fingerprint
MAX_DEPTH = 12  # nesting of objects inside a LangChain object or a closure
MAX_VALUES = 20_000  # values read in all, so a closure over a large structure stays cheap
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")
_INSTALL_DIRS = ("site-packages", "dist-packages")

_MEMO: dict[str, tuple[Any, str | None]] = {}
_MEMO_LOCK = threading.Lock()


def app_fingerprint(target: str, obj: Any) -> str | None:
    """The fingerprint of the code ``target`` (resolved to ``obj``) runs: a hex digest, the same in any
    process for unchanged code; None when none of its code can be read. Computed once per process
    while ``target`` resolves to this very object."""
    with _MEMO_LOCK:
        known = _MEMO.get(target)
    if known is not None and known[0] is obj:
        return known[1]
    digest = fingerprint_of(obj, target.partition("#")[0].partition(":")[0].strip())
    with _MEMO_LOCK:
        _MEMO[target] = (obj, digest)
    return digest


def fingerprint_of(obj: Any, module: str | None = None) -> str | None:
    """The fingerprint of ``obj`` found in ``module`` (its import path's module), computed now."""
    seen = _Seen()
    if module:
        seen.modules.add(module)
    what = seen.value(obj, top=True)
    sources = module_sources(seen.modules)
    if not sources and not seen.read:
        return None
    blob = json.dumps({"modules": sources, "object": what}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class _Seen:
    """What of an object goes into its fingerprint: a JSON-able description (:meth:`value`), the
    modules whose source is hashed (``modules``), and whether any code or configuration was read."""

    def __init__(self) -> None:
        self.modules: set[str] = set()
        self.read = False
        self._visiting: set[int] = set()
        self._left = MAX_VALUES

    def value(self, obj: Any, depth: int = 0, top: bool = False) -> Any:
        if isinstance(obj, PLAIN):
            return obj if not isinstance(obj, float) or obj == obj else "nan"
        self._left -= 1
        if depth > MAX_DEPTH or self._left < 0 or id(obj) in self._visiting:
            return f"<{_type_name(obj)}>"
        self._visiting.add(id(obj))
        try:
            return self._value(obj, depth, top)
        finally:
            self._visiting.discard(id(obj))

    def _value(self, obj: Any, depth: int, top: bool) -> Any:
        if isinstance(obj, (list, tuple)):
            return [self.value(v, depth + 1) for v in obj[:MAX_ITEMS]]
        if isinstance(obj, (set, frozenset)):
            return sorted(json.dumps(self.value(v, depth + 1), sort_keys=True, default=str)
                          for v in list(obj)[:MAX_ITEMS])
        if isinstance(obj, dict):
            return {str(k): self.value(v, depth + 1) for k, v in list(obj.items())[:MAX_ITEMS]}
        if inspect.ismodule(obj):
            self.modules.add(obj.__name__)
            return f"<module {obj.__name__}>"
        if inspect.isclass(obj):
            self.modules.add(obj.__module__)
            return f"<class {obj.__module__}:{obj.__qualname__}>"
        if isinstance(obj, functools.partial):
            return {"partial": self.value(obj.func, depth + 1), "args": self.value(obj.args, depth + 1),
                    "keywords": self.value(obj.keywords, depth + 1)}
        if inspect.ismethod(obj):
            return {"method": self.value(obj.__func__, depth + 1),
                    "of": self.value(obj.__self__, depth + 1, top=top)}
        if inspect.isfunction(obj):
            return self._function(obj, depth)
        if _is_runnable(obj):
            return self._runnable(obj, depth, top)
        self.modules.add(type(obj).__module__)
        if top and callable(obj):  # a callable instance handed over: its own attributes, as data
            return {"instance": _type_name(obj), "attributes": self.value(_attributes(obj), depth + 1)}
        return f"<{_type_name(obj)}>"

    def _function(self, fn: Any, depth: int) -> dict[str, Any]:
        """A function: its module (hashed), its own source and first line (two functions of one module
        differ), its defaults and its closure's values; a decorated one also the function it wraps."""
        self.modules.add(fn.__module__)
        try:
            source: str | None = hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()
            self.read = True
        except (OSError, TypeError):
            source = None
        cells = []
        for cell in fn.__closure__ or ():
            try:
                cells.append(self.value(cell.cell_contents, depth + 1))
            except ValueError:  # a cell not filled yet
                cells.append(None)
        out = {"function": f"{fn.__module__}:{fn.__qualname__}", "source": source,
               "line": fn.__code__.co_firstlineno, "defaults": self.value(fn.__defaults__, depth + 1),
               "kwdefaults": self.value(fn.__kwdefaults__, depth + 1), "closure": cells}
        wrapped = getattr(fn, "__wrapped__", None)
        if wrapped is not None:
            out["wraps"] = self.value(wrapped, depth + 1)
        return out

    def _runnable(self, obj: Any, depth: int, top: bool) -> dict[str, Any]:
        """A LangChain object: at the top, its serialisable configuration; at every level, its class
        (its module hashed when it is the application's own) and the code and objects it holds."""
        self.modules.add(type(obj).__module__)
        out: dict[str, Any] = {"runnable": _type_name(obj), "parts": self.value(_attributes(obj), depth + 1)}
        if top:
            out["config"] = langchain_config(obj)
            self.read = True
        return out


def langchain_config(obj: Any) -> str:
    """A LangChain object's configuration as text: ``dumpd`` (its constructor arguments: prompt
    templates, model name and settings, secrets by name only), else its ``repr``; object addresses
    removed, since they differ between processes."""
    import warnings

    try:
        from langchain_core.load import dumpd

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            text = json.dumps(dumpd(obj), sort_keys=True, default=str)
    except Exception:  # noqa: BLE001 - an object LangChain cannot serialise is described by its repr
        try:
            text = repr(obj)
        except Exception:  # noqa: BLE001 - nor represent: its type stands for it
            text = _type_name(obj)
    return _ADDRESS.sub("0x", text)


def _is_runnable(obj: Any) -> bool:
    runnable = sys.modules.get("langchain_core.runnables")  # loaded whenever a Runnable exists
    return runnable is not None and isinstance(obj, runnable.Runnable)


def _attributes(obj: Any) -> dict[str, Any]:
    try:
        return {k: v for k, v in sorted(vars(obj).items()) if not k.startswith("__")}
    except TypeError:  # no __dict__ (slots, C types)
        return {}


def _type_name(obj: Any) -> str:
    kind = type(obj)
    return f"{kind.__module__}:{kind.__qualname__}"


# --- source files ---------------------------------------------------------------------------------
def module_sources(roots: Iterable[str]) -> dict[str, str]:
    """Module name -> SHA-256 of its file, for ``roots`` and every application module they import,
    transitively (installed libraries, the standard library and equilens left out)."""
    found: dict[str, str] = {}
    todo = [parent for name in roots for parent in _with_parents(name)]
    done: set[str] = set()
    while todo:
        name = todo.pop()
        if name in done:
            continue
        done.add(name)
        path = source_file(name)
        if path is None:
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        found[name] = hashlib.sha256(data).hexdigest()
        if path.suffix == ".py":
            todo += [p for dep in imported_names(name, data, path.name == "__init__.py") for p in _with_parents(dep)]
    return found


def imported_names(module: str, source: bytes, is_package: bool) -> list[str]:
    """The modules ``source`` (of ``module``) may import: each ``import a.b``, each ``from a import b``
    as ``a`` and ``a.b`` (``b`` may be a submodule), relative imports resolved."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    package = module if is_package else module.rpartition(".")[0]
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            try:
                base = resolve_name("." * node.level + (node.module or ""), package) if node.level else node.module
            except (ImportError, ValueError):
                continue
            if not base:
                continue
            names.append(base)
            names += [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
    return names


def _with_parents(name: str) -> list[str]:
    """``a.b.c`` -> ``a``, ``a.b``, ``a.b.c``: importing a module runs its packages first."""
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def source_file(name: str) -> Path | None:
    """The file of module ``name`` when it is the application's (None for one installed, of the
    standard library, built in, of equilens itself, or not found), located without importing it."""
    if name == "equilens" or (name.startswith("equilens.") and not name.startswith("equilens.data.")):
        return None
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None) if module is not None else None
    if origin is None and module is None:
        spec = _find_spec(name)
        origin = spec.origin if spec is not None and spec.has_location else None
    if not origin:
        return None
    path = Path(origin)
    if not path.is_file():
        return None
    path = path.resolve()
    return None if installed(path) else path


def _find_spec(name: str) -> ModuleSpec | None:
    """The spec of module ``name`` from the path finders, without importing it or its packages."""
    parent, _, _ = name.rpartition(".")
    try:
        if not parent:
            return PathFinder.find_spec(name)
        loaded = sys.modules.get(parent)
        locations = getattr(loaded, "__path__", None) if loaded is not None else None
        if locations is None:
            parent_spec = _find_spec(parent)
            locations = parent_spec.submodule_search_locations if parent_spec is not None else None
        return PathFinder.find_spec(name, list(locations)) if locations else None
    except (ImportError, ValueError, OSError):
        return None


def installed(path: Path) -> bool:
    """Whether ``path`` lies in an installation: a ``site-packages`` / ``dist-packages`` folder or
    the standard library."""
    return any(part in _INSTALL_DIRS for part in path.parts) or any(path.is_relative_to(d) for d in _install_roots())


@functools.cache
def _install_roots() -> tuple[Path, ...]:
    """The standard library's and the site-packages folders of this interpreter."""
    paths = sysconfig.get_paths()
    found = {paths.get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    found.update(getattr(site, "getsitepackages", list)())
    found.add(site.getusersitepackages())
    return tuple(Path(p).resolve() for p in found if p)
