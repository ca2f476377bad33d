"""Deterministic clinical safety evaluators, behind one protocol, with a registry.

``run_evaluators(result, scenario)`` runs every built-in evaluator that applies to the scenario
and returns one ``EvaluatorResult`` each (score in [0, 1], passed, findings, fail reasons,
details). The built-ins, by registered name:

- ``red_flags``: the red flags of the applicable protocols (``scorers/data/red_flag_protocols.yaml``)
  elicited, missed, acted on; fails on a missed flag below the escalation threshold or score < 0.9.
- ``escalation``: escalation appropriateness rules, each with a failure mode.
- ``hallucination``: unknown drugs, doses above the maximum (``scorers/data/drug_lexicon.json``),
  fabricated citations, unsourced precise statistics; any critical finding fails.
- ``completeness``: history, assessment and plan elements, and context extras.
- ``contamination``: the scenario's canary or unseen source text reproduced.

Add your own with ``@register_evaluator("name")`` in a module loaded by ``load_evaluator_module``
(the CLI's ``--evaluator-module PATH_OR_MODULE``); see ``scorers/evaluators/README.md``.
"""

from __future__ import annotations

from scorers.evaluators._base import Evaluator, EvaluatorError, Scoped, escalation_rank
from sim.records import SEVERITIES, EvaluatorResult, Finding, Severity
from scenarios.facts import is_red_flag_fact  # the scenario's meaning; here for evaluator modules
from scorers.evaluators._text import is_denial
from scorers.evaluators._registry import (
    evaluator_names,
    get_evaluator,
    load_evaluator_module,
    register_evaluator,
    run_evaluators,
)

# The data the evaluators share (red-flag protocols, the drug lexicon): data modules, registering nothing.
from scorers.evaluators._lexicon import DrugLexicon, load_drug_lexicon
from scorers.evaluators._protocols import RedFlag, RedFlagProtocol, applicable_protocols, load_red_flag_protocols

# Importing the built-in modules registers them, in this order (the order run_evaluators uses).
from scorers.evaluators._red_flags import RedFlagEvaluator  # registration order matters
from scorers.evaluators._escalation import DISPOSITION_FAILURE_MODES, EscalationEvaluator, Rule
from scorers.evaluators._escalation import RULES as ESCALATION_RULES
from scorers.evaluators._hallucination import DoseStatement, HallucinationEvaluator, parse_doses
from scorers.evaluators._completeness import CompletenessEvaluator
from scorers.evaluators._contamination import ContaminationEvaluator

BUILTIN_EVALUATORS: tuple[str, ...] = ("red_flags", "escalation", "hallucination", "completeness", "contamination")

__all__ = [
    "BUILTIN_EVALUATORS", "DISPOSITION_FAILURE_MODES", "ESCALATION_RULES",
    "SEVERITIES", "CompletenessEvaluator", "ContaminationEvaluator",
    "DoseStatement", "DrugLexicon", "EscalationEvaluator", "Evaluator", "EvaluatorError", "EvaluatorResult", "Finding",
    "HallucinationEvaluator", "RedFlag", "RedFlagEvaluator", "RedFlagProtocol", "Rule", "Scoped", "Severity",
    "applicable_protocols", "escalation_rank", "evaluator_names", "is_denial", "is_red_flag_fact", "get_evaluator",
    "load_drug_lexicon",
    "load_evaluator_module", "load_red_flag_protocols", "parse_doses", "register_evaluator", "run_evaluators",
]
