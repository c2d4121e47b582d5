"""The declarative rule set: schema, loading, evaluation, findings with evidence, fleet eligibility.

Pure like ``planner``: the plan, the world, the time and the rule set are
arguments; a violation is a ``Finding``, never an exception. Nothing here reads
a file: ``parse_rules`` takes the rule file's text (``flows.rule_file`` reads it).

The package imports none of its modules (importing one, say ``rules.loading``, loads
it and what it imports, not the whole package: no package-init loop):

    rules.loading       ``parse_rules``, ``RuleSet``, ``RuleProblem``
    rules.evaluate      ``evaluate``
    rules.context       ``EvaluationContext``
    rules.findings      ``Finding``, ``Verdict``
    rules.eligibility   ``candidate_fleets``, ``fleet_eligibility``, ``waiting_resource_reasons``, ...
    rules.evaluators    ``EVALUATORS``
    rules.schema        ``RULE_KINDS``
"""
