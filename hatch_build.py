"""Compile the project's own modules when the project is installed editable (issue 27, "A fast CLI").

uv's ``compile-bytecode`` compiles what it puts in site-packages; an editable install puts only a ``.pth`` there, so
the project's own ~170 modules had no bytecode until a process wrote it — and a process that may not write it
(``PYTHONDONTWRITEBYTECODE=1``, set in many shells and hosts, or a read-only checkout) compiled all of them again on
every ``sortie`` run (~0.2 CPU s of a 2 s ``sortie plan``). Python reads an existing ``__pycache__`` whatever that
setting says, so the editable build writes it once, here, as ``uv sync`` (or ``pip install -e``) installs the project.

Why this stays correct: the files are timestamp-checked (``PycInvalidationMode.TIMESTAMP``, whatever
``SOURCE_DATE_EPOCH`` says): Python compares each with its source's modification time and size on import, so an
edited module is compiled from its source — never stale code; only that module pays the compile again, until the
next ``uv sync --reinstall-package sortie`` or a run that may write bytecode. ``__pycache__`` is git-ignored.
A wheel build (``uv build``) writes nothing into the tree: installers compile what they unpack.
"""

from __future__ import annotations

import compileall
import py_compile
import sys
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: the packages an editable install serves from this tree (``[tool.hatch.build.targets.wheel] packages``)
PACKAGES = ("planner", "rules", "intents", "flows")


class CompileEditable(BuildHookInterface):
    """Writes the project's bytecode into the source tree when hatchling builds the editable wheel."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version != "editable":
            return
        root = Path(self.root)
        for package in PACKAGES:
            folder = root / package
            if folder.is_dir():
                # quiet=1: errors only; a module that does not compile fails at import as it always did
                compileall.compile_dir(folder, quiet=1, workers=1,
                                       invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
        print(f"compiled the project's modules for {sys.implementation.cache_tag} (editable install)", file=sys.stderr)
