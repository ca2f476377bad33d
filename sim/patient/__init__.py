"""The simulated patient: what it understands, how a persona colours it, and the optional patient model.

- ``sim.patient.simulator``: ``PatientSimulator`` answers the agent from the scenario's information tree.
- ``sim.patient.understanding``: normalisation, the question filter, the scenario's triggers and the shared
  intent lexicon (``Layers`` switches them).
- ``sim.patient.persona``: how a persona holds facts back and rewords around the scripted text.
- ``sim.patient.model``: ``PatientModel``, the optional model layer (``--patient-model``) and its cache.

The patient reads only the scenario (``scenarios``) and the record types: it never imports the scorers, so that
what the patient reveals cannot depend on how it is graded.
"""

from __future__ import annotations

from sim.patient.model import PatientModel
from sim.patient.simulator import (
    NEGATIVE_LINES,
    NOTHING_MORE_LINES,
    UNSURE_LINES,
    VOLUNTEER_MAX,
    PatientReply,
    PatientSimulator,
    normalise,
    stem,
    volunteered_answer,
)
from sim.patient.understanding import Layer, Layers, Understanding

__all__ = [
    "NEGATIVE_LINES", "NOTHING_MORE_LINES", "UNSURE_LINES", "VOLUNTEER_MAX", "Layer", "Layers", "PatientModel",
    "PatientReply", "PatientSimulator", "Understanding", "normalise", "stem", "volunteered_answer",
]
