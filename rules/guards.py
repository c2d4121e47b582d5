"""``when:`` guards: a safe expression language over a typed, per-sortie context.

Guards use PyPI ``rule-engine`` (pure Python, no ``eval``): the expression is
parsed and type-checked against ``GUARD_SYMBOLS`` when the rule file is loaded,
so ``phase < 3`` or an unknown symbol is a load-time problem, not a surprise at
dispatch. The builtins that read the clock or a random generator (``$now``,
``$today``, ``$random``) are removed: a guard is a pure function of its context.

A rule whose guard is false for a sortie is not evaluated for that sortie. A
guard that fails at run time counts as true (the rule applies): a broken guard
must never switch a safety rule off.

Example::

    >>> g = compile_guard('phase == "dispatch" and "THERMAL_CAMERA" in required_sensors')
    >>> g.matches({**GUARD_DEFAULTS, "phase": "dispatch", "required_sensors": {"THERMAL_CAMERA"}})
    True
"""

from __future__ import annotations

import functools
import math
import re
import sys
from dataclasses import dataclass
from typing import Any

__all__ = ["GUARD_DEFAULTS", "GUARD_SYMBOLS", "Guard", "GuardError", "compile_guard"]  # noqa: F822 - GUARD_SYMBOLS via __getattr__


@functools.cache
def _rule_engine() -> Any:
    """rule-engine, imported once, with its parser tables read from ``rules.guard_tables`` instead of built.

    rule-engine builds its grammar's LALR tables when it is imported (0.3 CPU s
    with cached bytecode, over a second without), so it is imported only when a
    guard is compiled (a rule file loaded and checked), and PLY is handed the
    tables built once by ``scripts/make_guard_tables.py`` under the module name
    it looks for (``rule_engine.parser.parsetab``). PLY uses them only when their
    grammar signature matches the installed rule-engine's, else it builds its
    own: a table that is out of date is slow, never wrong.
    """
    from rules import guard_tables

    sys.modules.setdefault("rule_engine.parser.parsetab", guard_tables)
    import rule_engine

    return rule_engine


@functools.cache
def _guard_symbols() -> dict[str, Any]:
    """The typed symbols a guard may use, with what they mean (``GUARD_SYMBOLS``), built on first use (it needs
    rule-engine's types: ``_rule_engine``)."""
    rule_engine = _rule_engine()

    _T = rule_engine.DataType
    return {
        "phase": _T.STRING,  # "plan", "dispatch" or "launch"
        "mission_type": _T.STRING,  # FIRE_LANE_PATROL | AREA_SURVEY | POINT_INSPECTION | ...
        "sortie_index": _T.FLOAT,
        "drone_id": _T.STRING,
        "drone_model": _T.STRING,
        "dock_id": _T.STRING,
        "tenant": _T.STRING,
        "capabilities": _T.SET(_T.STRING),
        "required_sensors": _T.SET(_T.STRING),
        "start_hour_utc": _T.FLOAT,  # 0..24, fractional
        "weekday_utc": _T.STRING,  # MON..SUN
        "duration_s": _T.FLOAT,
        "max_altitude_m": _T.FLOAT,  # AGL
        "forecast_known": _T.BOOLEAN,
        "min_temperature_c": _T.FLOAT,  # NaN when unknown: comparing it fails, so the guard counts as true
        "max_wind_mps": _T.FLOAT,  # NaN when unknown
    }


def __getattr__(name: str) -> Any:
    """``GUARD_SYMBOLS`` is computed on first access (see ``_guard_symbols``)."""
    if name == "GUARD_SYMBOLS":
        return _guard_symbols()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


GUARD_DEFAULTS: dict[str, Any] = {
    "phase": "plan",
    "mission_type": "",
    "sortie_index": 0.0,
    "drone_id": "",
    "drone_model": "",
    "dock_id": "",
    "tenant": "",
    "capabilities": set(),
    "required_sensors": set(),
    "start_hour_utc": 0.0,
    "weekday_utc": "MON",
    "duration_s": 0.0,
    "max_altitude_m": 0.0,
    "forecast_known": False,
    "min_temperature_c": math.nan,
    "max_wind_mps": math.nan,
}

_FORBIDDEN_BUILTINS = frozenset({"now", "today", "random"})
_BUILTIN_REF = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


class GuardError(ValueError):
    """A guard expression that does not parse or does not type-check."""


@functools.cache
def _allowed_builtins() -> frozenset[str]:
    _rule_engine()
    from rule_engine.builtins import Builtins

    return frozenset(Builtins.from_defaults()) - _FORBIDDEN_BUILTINS


def _context() -> Any:
    rule_engine = _rule_engine()
    from rule_engine.builtins import Builtins

    ctx = rule_engine.Context(type_resolver=rule_engine.type_resolver_from_dict(_guard_symbols()))
    full = Builtins.from_defaults()
    values = {k: full._Builtins__values[k] for k in full if k not in _FORBIDDEN_BUILTINS}  # type: ignore[attr-defined]
    types = {k: v for k, v in full._Builtins__value_types.items() if k not in _FORBIDDEN_BUILTINS}  # type: ignore[attr-defined]
    ctx.builtins = Builtins(values, value_types=types, timezone=full.timezone)
    return ctx


@dataclass(frozen=True)
class Guard:
    """A compiled guard; ``matches`` never raises (a failure counts as true)."""

    text: str
    _rule: Any

    def matches(self, values: dict[str, Any]) -> bool:
        try:
            return bool(self._rule.matches(values))
        except Exception:  # noqa: BLE001 - see module docstring: fail towards applying the rule
            return True


def compile_guard(text: str) -> Guard:
    """Parse and type-check a guard; raises ``GuardError`` with a readable reason."""
    rule_engine = _rule_engine()

    for name in _BUILTIN_REF.findall(text):
        if name in _FORBIDDEN_BUILTINS or name not in _allowed_builtins():
            raise GuardError(f"builtin ${name} is not allowed in a guard (guards are pure: no clock, no randomness)")
    try:
        rule = rule_engine.Rule(text, context=_context())
    except rule_engine.errors.RuleSyntaxError as exc:
        token = getattr(exc, "token", None)
        where = f" near {token.value!r}" if token is not None and getattr(token, "value", None) is not None else ""
        raise GuardError(f"syntax error{where} in guard {text!r}") from None
    except rule_engine.errors.SymbolResolutionError as exc:
        known = ", ".join(sorted(_guard_symbols()))
        raise GuardError(f"unknown symbol {exc.symbol_name!r} in guard {text!r}; known: {known}") from None
    except rule_engine.errors.EngineError as exc:
        raise GuardError(f"{getattr(exc, 'message', exc)} in guard {text!r}") from None
    return Guard(text=text, _rule=rule)
