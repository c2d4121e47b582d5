"""CARPLIB instance files (``../shared/bench/carp/``): the literature's capacitated arc routing text format.

A file is ``KEYWORD : value`` header lines (Spanish: ``NOMBRE``, ``VERTICES``,
``ARISTAS_REQ``, ``ARISTAS_NOREQ``, ``VEHICULOS``, ``CAPACIDAD``, ...), then
``LISTA_ARISTAS_REQ :`` with one ``( u, v) coste c demanda d`` line per required edge,
``LISTA_ARISTAS_NOREQ :`` with ``( u, v) coste c`` lines, and ``DEPOSITO : k``.
Read by tokens, not columns, because the sets differ (``carp/README.md``):

* spacing varies, and the gdb/val/egl files start every line with a space;
* a section with no edges may be left out (gdb has no ``LISTA_ARISTAS_NOREQ``);
* ``COMENTARIO`` holds old bounds or placeholders and ``COSTE_TOTAL_REQ`` is not the
  sum of the required costs in every file (val, gdb12): neither is used;
* ``NOMBRE`` may differ from the file (``egl-e2-A.dat`` says ``egl-e2-7``; val says
  ``val1A`` for ``1A.dat``): the instance is named after its file;
* the depot is not always vertex 1 (Beullens);
* a value may carry text after its number (``COMENTARIO : 3625. (cota superior)``).

Anything else — a line that is none of these, a count that does not match the list,
a vertex outside ``1..VERTICES``, a negative cost or demand, a required edge without
its demand — is refused with ``InvalidArgument`` (a stable code, no traceback).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from planner.errors import InvalidArgument

__all__ = ["CarpEdge", "CarpInstance", "parse_carplib", "read_carplib"]

_HEADER = re.compile(r"^([A-Z_]+)\s*:\s*(.*?)\s*$")
_EDGE = re.compile(r"^\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)\s*coste\s+(-?\d+)(?:\s+demanda\s+(-?\d+))?\s*$")
_NUMBER = re.compile(r"^(-?\d+)")
_SECTIONS = {"LISTA_ARISTAS_REQ": "required", "LISTA_ARISTAS_NOREQ": "other"}


@dataclass(frozen=True)
class CarpEdge:
    """An undirected edge: its end vertices, the cost of every traversal, the demand served on it (0: not required)."""

    u: int
    v: int
    cost: int
    demand: int = 0


@dataclass(frozen=True)
class CarpInstance:
    """One CARPLIB instance: ``required`` edges are each served once; ``other`` edges are only travelled."""

    name: str  # the file's stem (``NOMBRE`` is kept in ``declared_name``)
    declared_name: str
    vertices: int
    capacity: int
    depot: int
    vehicles: int  # CARPLIB's VEHICULOS: a lower bound on the routes, not a fleet limit
    required: tuple[CarpEdge, ...]
    other: tuple[CarpEdge, ...]

    @property
    def edges(self) -> tuple[CarpEdge, ...]:
        return self.required + self.other

    @property
    def service_cost(self) -> int:
        """The cost of serving every required edge once (every plan pays it)."""
        return sum(e.cost for e in self.required)


def _integer(header: dict[str, str], key: str) -> int:
    if key not in header:
        raise InvalidArgument(f"CARPLIB: the header has no {key}")
    m = _NUMBER.match(header[key])
    if not m:
        raise InvalidArgument(f"CARPLIB: {key} is not an integer: {header[key]!r}")
    return int(m.group(1))


def parse_carplib(text: str, name: str) -> CarpInstance:
    """The instance in ``text`` (a CARPLIB file's contents), named ``name``."""
    header: dict[str, str] = {}
    lists: dict[str, list[CarpEdge]] = {"required": [], "other": []}
    section: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("="):  # blank, or a closing separator
            continue
        head = _HEADER.match(line)
        if head:
            key, value = head.groups()
            section = _SECTIONS.get(key)
            if section is None:
                header[key] = value
            continue
        edge = _EDGE.match(line)
        if edge is None or section is None:
            raise InvalidArgument(f"CARPLIB line {number} is not understood: {line[:80]!r}")
        u, v, cost, demand = edge.groups()
        if section == "required" and demand is None:
            raise InvalidArgument(f"CARPLIB line {number}: a required edge without its demanda")
        e = CarpEdge(int(u), int(v), int(cost), int(demand) if section == "required" else 0)
        if e.cost < 0 or e.demand < 0:
            raise InvalidArgument(f"CARPLIB line {number}: a negative cost or demand")
        lists[section].append(e)
    m = re.search(r"^\s*DEPOSITO\s*:\s*(\d+)", text, re.M)
    if m is None:
        raise InvalidArgument("CARPLIB: no DEPOSITO")
    inst = CarpInstance(
        name=name,
        declared_name=header.get("NOMBRE", name),
        vertices=_integer(header, "VERTICES"),
        capacity=_integer(header, "CAPACIDAD"),
        depot=int(m.group(1)),
        vehicles=_integer(header, "VEHICULOS"),
        required=tuple(lists["required"]),
        other=tuple(lists["other"]),
    )
    _check(inst, _integer(header, "ARISTAS_REQ"), _integer(header, "ARISTAS_NOREQ"))
    return inst


def _check(inst: CarpInstance, n_required: int, n_other: int) -> None:
    if len(inst.required) != n_required:
        raise InvalidArgument(f"CARPLIB: ARISTAS_REQ says {n_required}, {len(inst.required)} are listed")
    if len(inst.other) != n_other:
        raise InvalidArgument(f"CARPLIB: ARISTAS_NOREQ says {n_other}, {len(inst.other)} are listed")
    if not 1 <= inst.depot <= inst.vertices:
        raise InvalidArgument(f"CARPLIB: the depot {inst.depot} is not a vertex 1..{inst.vertices}")
    if inst.capacity <= 0:
        raise InvalidArgument(f"CARPLIB: CAPACIDAD must be positive, not {inst.capacity}")
    for e in inst.edges:
        if not (1 <= e.u <= inst.vertices and 1 <= e.v <= inst.vertices):
            raise InvalidArgument(f"CARPLIB: edge ({e.u}, {e.v}) has a vertex outside 1..{inst.vertices}")
    over = [e for e in inst.required if e.demand > inst.capacity]
    if over:
        raise InvalidArgument(f"CARPLIB: edge ({over[0].u}, {over[0].v}) demands more than the capacity")


def read_carplib(path: str | Path) -> CarpInstance:
    """The instance in the file at ``path``, named after the file (``1A.dat`` → ``1A``)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="latin-1")
    except OSError as exc:
        raise InvalidArgument(f"CARPLIB: cannot read {p}: {exc.strerror}") from None
    return parse_carplib(text, p.stem)
