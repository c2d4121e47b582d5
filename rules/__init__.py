"""The declarative rule set: schema, loading, evaluation, findings with evidence, fleet eligibility.

Pure like ``planner``: the plan, the world, the time and the rule set are
arguments; a violation is a ``Finding``, never an exception. Only
``load_rules``/``validate_rules_file`` read a file (the text-in ``parse_rules``
is the pure part).
"""

from __future__ import annotations

from rules.context import EvaluationContext
from rules.eligibility import (
    Eligibility,
    FleetCandidate,
    JobRequirements,
    Reason,
    candidate_fleets,
    fleet_eligibility,
    waiting_resource_reasons,
)
from rules.evaluate import evaluate
from rules.evaluators import EVALUATORS
from rules.findings import Finding, Verdict
from rules.loading import (
    RuleProblem,
    RuleSet,
    load_rules,
    parse_rules,
    validate_rules_file,
)
from rules.schema import RULE_KINDS

__all__ = [
    "EVALUATORS",
    "RULE_KINDS",
    "Eligibility",
    "EvaluationContext",
    "Finding",
    "FleetCandidate",
    "JobRequirements",
    "Reason",
    "RuleProblem",
    "RuleSet",
    "Verdict",
    "candidate_fleets",
    "evaluate",
    "fleet_eligibility",
    "load_rules",
    "parse_rules",
    "validate_rules_file",
    "waiting_resource_reasons",
]
