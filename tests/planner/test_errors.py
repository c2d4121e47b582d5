"""The error tree: stable codes, built-in bases, each code in the module of the part that raises it, the examples."""

from __future__ import annotations

import doctest

import pytest

import flows.errors
import intents.errors
import planner.errors as errors
from flows.errors import ERROR_CODES
from planner.errors import SortieError

EXPECTED = {
    "INVALID_ARGUMENT": ValueError,
    "FORBIDDEN": PermissionError,
    "NOT_FOUND": LookupError,
    "CONFLICT": RuntimeError,
    "AIRSPACE_BLOCKED": RuntimeError,
    "DEVICE_UNAVAILABLE": RuntimeError,
    "DEVICE_MISMATCH": RuntimeError,
    "APPROVAL_REQUIRED": PermissionError,
    "APPROVAL_STALE": RuntimeError,
    "DISPATCH_FAILED": RuntimeError,
    "DISPATCH_UNCERTAIN": RuntimeError,
    "LEDGER_UNAVAILABLE": RuntimeError,
    "LEDGER_TAMPERED": RuntimeError,
    "APPROVAL_INVALID": PermissionError,
    "DEVICE_BUSY": RuntimeError,
    "PREFLIGHT_FAILED": RuntimeError,
    "LLM_UNAVAILABLE": ConnectionError,
    "INTENT_INVALID": ValueError,
    "PLAN_INFEASIBLE": RuntimeError,
    "UNAUTHENTICATED": PermissionError,
    "WORLD_UNAVAILABLE": RuntimeError,
    "SERVER_UNAVAILABLE": ConnectionError,
    "OVERRIDE_REFUSED": ValueError,
    "REQUEST_EXPIRED": RuntimeError,
    "TOO_MANY_ATTEMPTS": PermissionError,
    "TOO_MANY_REQUESTS": RuntimeError,
}

#: the pure core raises only these (planner/, rules/ and intents/ may import nothing of the shell)
CORE_CODES = {"INVALID_ARGUMENT", "NOT_FOUND", "AIRSPACE_BLOCKED", "PLAN_INFEASIBLE", "LLM_UNAVAILABLE", "INTENT_INVALID"}


@pytest.mark.parametrize("code", sorted(EXPECTED))
def test_every_code_has_one_class_with_its_builtin_base(code: str) -> None:
    cls = ERROR_CODES[code]
    err = cls("something went wrong", details={"k": 1})
    assert err.code == code
    assert isinstance(err, SortieError) and isinstance(err, EXPECTED[code])
    assert str(err) == f"{code}: something went wrong"
    assert err.to_dict() == {"code": code, "message": "something went wrong", "details": {"k": 1}}


def test_codes_are_exactly_the_documented_ones() -> None:
    assert set(ERROR_CODES) == set(EXPECTED)
    for code in EXPECTED:
        assert code in errors.__doc__


def test_each_code_lives_where_the_tree_says() -> None:
    """The drawn tree names each code's module; the core's module holds the root and the core's codes only."""
    for code, cls in {**ERROR_CODES, "NEEDS_CLARIFICATION": intents.errors.NeedsClarification}.items():
        (row,) = [line for line in errors.__doc__.splitlines() if f" {code} " in f"{line} "]
        assert row.split()[-1] == cls.__module__, code
    core = {cls.code for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, SortieError)}
    assert core - {SortieError.code} == CORE_CODES


@pytest.mark.parametrize("module", [errors, intents.errors, flows.errors], ids=lambda m: m.__name__)
def test_module_docstring_example_runs(module: object) -> None:
    failures, tried = doctest.testmod(module, verbose=False)
    assert tried > 0 and failures == 0
