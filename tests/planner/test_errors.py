"""The error tree: stable codes, built-in bases, and the documented example."""

from __future__ import annotations

import doctest

import pytest

import planner.errors as errors
from planner.errors import ERROR_CODES, SortieError

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


def test_module_docstring_example_runs() -> None:
    failures, tried = doctest.testmod(errors, verbose=False)
    assert tried > 0 and failures == 0
