"""Regular expressions compiled on first use: the offline reader's tables cost nothing until a request needs them.

The grammar's vocabulary and time words are ~100 patterns built at import; compiling them all was about half of
importing ``intents`` (0.08-0.1 CPU s of every ``sortie plan``, issue 27), and a request uses a part of them (the
demo's "这块地今天巡一遍消防通道" never needs the height, list or clock patterns). ``LazyPattern`` keeps the source
and flags, compiles through ``re.compile`` (and its cache) the first time it is searched, and then behaves as the
compiled pattern: the same methods, the same matches. ``.pattern`` is the source without compiling, so tables that
join patterns into bigger ones stay free.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

__all__ = ["LazyPattern"]


class LazyPattern:
    """A ``re.Pattern`` made on first use (``compiled``); every method delegates to it."""

    __slots__ = ("pattern", "_flags", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self._flags)
        return self._compiled

    def search(self, *args: Any, **kwargs: Any) -> re.Match[str] | None:
        return self.compiled.search(*args, **kwargs)

    def match(self, *args: Any, **kwargs: Any) -> re.Match[str] | None:
        return self.compiled.match(*args, **kwargs)

    def fullmatch(self, *args: Any, **kwargs: Any) -> re.Match[str] | None:
        return self.compiled.fullmatch(*args, **kwargs)

    def finditer(self, *args: Any, **kwargs: Any) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(*args, **kwargs)

    def findall(self, *args: Any, **kwargs: Any) -> list[Any]:
        return self.compiled.findall(*args, **kwargs)

    def sub(self, *args: Any, **kwargs: Any) -> str:
        return self.compiled.sub(*args, **kwargs)

    def subn(self, *args: Any, **kwargs: Any) -> tuple[str, int]:
        return self.compiled.subn(*args, **kwargs)

    def split(self, *args: Any, **kwargs: Any) -> list[Any]:
        return self.compiled.split(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # flags, groups, groupindex, scanner: the compiled pattern's
        return getattr(self.compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self._flags!r})"
