"""The declarative rule set: schema, loading, evaluation, findings with evidence, fleet eligibility.

Pure like ``planner``: the plan, the world, the time and the rule set are
arguments; a violation is a ``Finding``, never an exception. Nothing here reads
a file: ``parse_rules`` takes the rule file's text (``flows.rule_file`` reads it).
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
from rules.loading import RuleProblem, RuleSet, parse_rules
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
    "parse_rules",
    "waiting_resource_reasons",
]
