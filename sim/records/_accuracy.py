"""Proportions with bootstrap CIs, and the run's image accuracy (``scorers._image_accuracy`` computes it).

``Rate`` is one proportion (triage accuracy's figures are ``Rate`` too). ``ImageAccuracy`` is how a run did on
images, as AgentClinic reports its NEJM image cases: the multiple-choice accuracy of the imaging items, and the top-1
/ top-3 diagnosis of the encounters in which the patient can show an image, over the run and by image type (the
scenarios' ``image_type:<type>`` tags; one row per type, a case of two types in both).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

IMAGE_TYPE_TAG = "image_type:"
UNTYPED = "(no image type)"


class Rate(BaseModel):
    """One proportion: ``count`` of ``n`` encounters, with its 95% bootstrap CI (``None`` when ``n`` is 0)."""

    value: float | None
    ci95: list[float] | None = None
    count: int = Field(description="encounters that meet the definition")
    n: int = Field(description="encounters in the denominator")

    def text(self) -> str:
        """"0.83 [0.67, 1.00]", or "n/a" without encounters."""
        if self.value is None:
            return "n/a"
        ci = f" [{self.ci95[0]:.2f}, {self.ci95[1]:.2f}]" if self.ci95 else ""
        return f"{self.value:.2f}{ci}"


class TypeAccuracy(BaseModel):
    """The figures of one image type (or of the whole run: ``image_type`` "all")."""

    image_type: str
    choice: Rate = Field(description="multiple-choice items answered right, of those scored")
    text_only: int = Field(default=0, description="of those, items asked without their image (image_unavailable)")
    top1: Rate = Field(description="encounters whose first diagnosis is the expected one (or a synonym)")
    top3: Rate = Field(description="encounters with the expected diagnosis within the first three")


class ImageAccuracy(BaseModel):
    """Multiple-choice accuracy of imaging items and top-1/top-3 of encounters with an image, overall and by type."""

    overall: TypeAccuracy
    by_type: list[TypeAccuracy] = Field(default=[], description="one row per image type, in name order")
    not_applicable: int = Field(default=0, description="items not shown to this model (text-only), not counted")
    errors: int = Field(default=0, description="items and encounters that ended in an error, not counted")
    scenarios: int = Field(default=0, description="scenarios with at least one scored encounter")
    clustered: bool = Field(default=False, description="CIs from a cluster bootstrap over scenarios (K > 1)")
    resamples: int = 1000
    seed: int = 0

    def ci_method(self) -> str:
        """How the CIs were computed, in words."""
        unit = f"scenarios ({self.scenarios})" if self.clustered else "encounters"
        return f"95% percentile bootstrap CIs over {unit}, {self.resamples} resamples, seed {self.seed}"

    def cli_line(self) -> str:
        """The one-line summary the CLI prints after a run or a report."""
        o = self.overall
        parts = []
        if o.choice.n:
            parts.append(f"multiple choice {o.choice.text()} ({o.choice.count}/{o.choice.n})")
        if o.top1.n:
            parts.append(f"diagnosis top-1 {o.top1.text()}, top-3 {o.top3.text()} ({o.top1.n} encounters)")
        extra = f"; {self.not_applicable} not applicable to this model" if self.not_applicable else ""
        return "Image accuracy: " + "; ".join(parts) + extra
