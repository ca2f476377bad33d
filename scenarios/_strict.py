"""The strict base of the scenario schema's models: unknown fields are errors, instances are frozen."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
