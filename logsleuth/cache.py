"""A small on-disk memo for start-up work that depends only on data and code: compiled built-in
layouts (so pyparsing is not even imported on a normal run) and each pattern's literals and group
names. Keyed by the source of the modules that compute the values, so a code change can never
serve a stale entry. Best effort: an unwritable cache directory just means no cache.

``LOGSLEUTH_CACHE_DIR`` moves it (default ``$XDG_CACHE_HOME/logsleuth`` or ``~/.cache/logsleuth``);
``LOGSLEUTH_NO_CACHE=1`` turns it off.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

_stores: dict[str, "_Store"] = {}


def _dir() -> Path | None:
    if os.environ.get("LOGSLEUTH_NO_CACHE"):
        return None
    base = os.environ.get("LOGSLEUTH_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "logsleuth" if xdg else Path.home() / ".cache" / "logsleuth"


@lru_cache(maxsize=16)
def code_hash(*modules: str) -> str:
    """Hash of the given modules' source files (plus the version)."""
    import importlib.util

    from logsleuth import __version__

    h = hashlib.sha1(__version__.encode())
    for m in modules:
        spec = importlib.util.find_spec(m)
        if spec and spec.origin:
            try:
                h.update(Path(spec.origin).read_bytes())
            except OSError:
                h.update(m.encode())
    return h.hexdigest()[:16]


# A store keeps every value computed under its code, for any data (each user pack ever loaded, each
# version of a pack being edited, every test's): past this size, a store that is written keeps the
# values this run used and, of the others, the newest that fit. A store read at a larger size is
# written again so (reading a few MB of JSON was ~30 ms of each run's start-up).
MAX_STORE_BYTES = 1 << 20


class _Store:
    def __init__(self, path: Path | None):
        self.path = path
        self.data: dict[str, Any] = {}
        self.dirty = False
        self.used: set[str] = set()
        if path is not None:
            try:
                text = path.read_text(encoding="utf-8")
                self.data = json.loads(text)
                if not isinstance(self.data, dict):
                    self.data = {}
                elif len(text) > MAX_STORE_BYTES:
                    self.dirty = True  # written back smaller at exit
            except (OSError, ValueError, RecursionError):  # unreadable or corrupt: start again
                self.data = {}

    def _bounded(self) -> dict[str, Any]:
        text_of = {k: json.dumps({k: v}) for k, v in self.data.items()}
        if sum(len(t) for t in text_of.values()) <= MAX_STORE_BYTES:
            return self.data
        keep = [k for k in self.data if k in self.used]
        room = MAX_STORE_BYTES - sum(len(text_of[k]) for k in keep)
        for k in reversed([k for k in self.data if k not in self.used]):  # newest first
            if len(text_of[k]) <= room:
                keep.append(k)
                room -= len(text_of[k])
        kept = set(keep)
        return {k: v for k, v in self.data.items() if k in kept}

    def save(self) -> None:
        if not self.dirty or self.path is None:
            return
        try:
            self.data = self._bounded()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            try:
                tmp.write_text(json.dumps(self.data), encoding="utf-8")
                os.replace(tmp, self.path)
            finally:
                if tmp.exists():
                    tmp.unlink()
        except (OSError, ValueError, RecursionError):
            pass
        self.dirty = False


def memo(kind: str, key: str, compute: Callable[[], Any], *modules: str) -> Any:
    """``compute()`` (JSON-serialisable), remembered under (kind, code of ``modules``, key)."""
    name = f"{kind}-{code_hash(*modules)}"
    store = _stores.get(name)
    if store is None:  # the directory is looked up once per store (Path.home() is not free: ~300 calls a run)
        d = _dir()
        store = _stores[name] = _Store(d / f"{name}.json" if d else None)
        if len(_stores) == 1:
            atexit.register(_save_all)
    store.used.add(key)
    entry = store.data.get(key)
    if entry is not None:
        # each value is kept with a checksum of itself: a file damaged on disk (or edited) gives a
        # value that fails it, and that value is computed again instead of crashing its caller
        if isinstance(entry, list) and len(entry) == 2 and entry[1] == _check(entry[0]):
            return entry[0]
    value = compute()
    store.data.pop(key, None)  # (re)inserted last: the newest
    store.data[key] = [value, _check(value)]
    store.dirty = True
    return value


def _check(value: Any) -> str:
    try:
        text = json.dumps(value, sort_keys=True, ensure_ascii=True)
    except (TypeError, ValueError, RecursionError):
        return ""
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _save_all() -> None:
    for s in _stores.values():
        s.save()


def parsed_toml(text: str) -> dict:
    """``tomllib.loads(text)`` of a built-in data file (layouts, wrappers, stamps, the field
    vocabulary), remembered by the text's hash when it is plain JSON data: parsing them was ~12 ms
    of each run's start-up (layouts.toml twice). A TOML error is raised as ``tomllib.loads`` raises
    it (nothing is remembered for it). The value is shared: read it, do not change it."""
    import tomllib

    def plain() -> dict | None:
        data = tomllib.loads(text)
        try:
            return data if json.loads(json.dumps(data)) == data else None
        except (TypeError, ValueError, RecursionError):  # a TOML date or time: not JSON, parsed each time
            return None

    data = memo("toml", hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest(), plain, "logsleuth.cache")
    return data if isinstance(data, dict) else tomllib.loads(text)
