"""bench.carp_file: the CARPLIB reader, on every format quirk ../shared/bench/carp/README.md lists, and bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.carp_file import CarpEdge, parse_carplib, read_carplib
from planner.errors import InvalidArgument

CARP = next((p / "shared" / "bench" / "carp" for p in Path(__file__).resolve().parents
             if (p / "shared" / "bench" / "carp").is_dir()), Path("/nonexistent"))

# gdb/val/egl style: every line starts with a space, spacing varies, no LISTA_ARISTAS_NOREQ when there are
# none, COMENTARIO a placeholder, COSTE_TOTAL_REQ not the sum of the required costs (gdb12: 334 vs 336)
GDB_STYLE = """ NOMBRE : gdbx
 COMENTARIO : 10000 (cota superior)
 VERTICES : 4
 ARISTAS_REQ : 3
 ARISTAS_NOREQ : 0
 VEHICULOS : 2
 CAPACIDAD : 5
 TIPO_COSTES_ARISTAS : EXPLICITOS 
 COSTE_TOTAL_REQ : 99
 LISTA_ARISTAS_REQ :
 ( 1, 2)  coste 13 demanda 1
 (  2,  3)   coste     4   demanda     3
 ( 3, 4)  coste 2 demanda 5
 DEPOSITO :   1
"""

# Beullens style: no leading space, the depot is not vertex 1, non-required edges, OPT=/UB=,LB= comments,
# a NOMBRE that differs from the file (egl-e2-A.dat says egl-e2-7; val says val1A for 1A.dat)
BEULLENS_STYLE = """NOMBRE : other-name
COMENTARIO : UB=4150, LB=4145
VERTICES : 5
ARISTAS_REQ : 2
ARISTAS_NOREQ : 2
VEHICULOS : 1
CAPACIDAD : 300
TIPO_COSTES_ARISTAS : EXPLICITOS
COSTE_TOTAL_REQ : 3625. (cota superior)
LISTA_ARISTAS_REQ :
( 1, 5)   coste 10   demanda 10
( 2, 5)   coste 20   demanda 20
LISTA_ARISTAS_NOREQ :
( 3, 4)   coste 45
( 4, 5)   coste 70
DEPOSITO :   4
===========================
"""


def test_gdb_style_leading_spaces_varying_spacing_and_no_other_edges() -> None:
    inst = parse_carplib(GDB_STYLE, "gdbx")
    assert (inst.vertices, inst.capacity, inst.depot, inst.vehicles) == (4, 5, 1, 2)
    assert inst.required == (CarpEdge(1, 2, 13, 1), CarpEdge(2, 3, 4, 3), CarpEdge(3, 4, 2, 5))
    assert inst.other == ()
    assert inst.service_cost == 19  # the sum of the listed costs, not COSTE_TOTAL_REQ (99)


def test_beullens_style_depot_not_one_other_edges_and_a_name_from_the_file() -> None:
    inst = parse_carplib(BEULLENS_STYLE, "C99")
    assert inst.name == "C99" and inst.declared_name == "other-name"
    assert inst.depot == 4
    assert inst.other == (CarpEdge(3, 4, 45, 0), CarpEdge(4, 5, 70, 0))
    assert [e.demand for e in inst.required] == [10, 20]


@pytest.mark.parametrize("change, message", [
    (("ARISTAS_REQ : 3", "ARISTAS_REQ : 4"), "ARISTAS_REQ says 4"),
    (("ARISTAS_NOREQ : 0", "ARISTAS_NOREQ : 1"), "ARISTAS_NOREQ says 1"),
    (("( 3, 4)  coste 2 demanda 5", "( 3, 9)  coste 2 demanda 5"), "outside 1..4"),
    (("( 3, 4)  coste 2 demanda 5", "( 3, 4)  coste 2"), "without its demanda"),
    (("( 3, 4)  coste 2 demanda 5", "( 3, 4)  coste 2 demanda 6"), "more than the capacity"),
    (("( 3, 4)  coste 2 demanda 5", "( 3, 4)  coste -2 demanda 5"), "negative"),
    (("( 3, 4)  coste 2 demanda 5", "( 3; 4)  coste 2 demanda 5"), "not understood"),
    ((" DEPOSITO :   1", " DEPOSITO :   7"), "not a vertex"),
    ((" DEPOSITO :   1", ""), "no DEPOSITO"),
    ((" CAPACIDAD : 5", " CAPACIDAD : many"), "CAPACIDAD is not an integer"),
    ((" VERTICES : 4", ""), "no VERTICES"),
])
def test_bad_input_is_refused_with_a_stable_code(change: tuple[str, str], message: str) -> None:
    with pytest.raises(InvalidArgument, match=message) as err:
        parse_carplib(GDB_STYLE.replace(*change), "bad")
    assert err.value.code == "INVALID_ARGUMENT"


def test_a_missing_file_is_refused_with_a_stable_code(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="cannot read"):
        read_carplib(tmp_path / "none.dat")


@pytest.mark.skipif(not CARP.is_dir(), reason="../shared/bench/carp is not beside the repo")
def test_every_shared_instance_reads_as_its_readme_describes() -> None:
    files = sorted(CARP.glob("*/*.dat"))
    assert len(files) == 181
    insts = {p.stem: read_carplib(p) for p in files}
    assert insts["egl-e2-A"].declared_name == "egl-e2-7" and insts["1A"].declared_name == "val1A"
    assert insts["C01"].depot == 40 and all(insts[k].depot == 1 for k in insts if not k[0] in "CDEF")
    gdb12 = (CARP / "gdb" / "gdb12.dat").read_text(encoding="latin-1")
    assert "COSTE_TOTAL_REQ : 334" in gdb12 and insts["gdb12"].service_cost == 336
    for name, inst in insts.items():
        pairs = [frozenset((e.u, e.v)) for e in inst.edges]
        assert len(set(pairs)) == len(pairs) and all(len(p) == 2 for p in pairs), name  # no parallel edges, no loops
        assert -(-sum(e.demand for e in inst.required) // inst.capacity) == inst.vehicles, name
