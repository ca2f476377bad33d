"""scenarios.load_model_file: one loader for YAML / JSON files validated by a pydantic model.

Every failure is the caller's UserError subclass with one paragraph: the file, what is wrong and where, the fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, TypeAdapter, field_validator

from scenarios import UserError, load_model_file

FIX = "Fix the file as the manual says."


class _Dose(BaseModel):
    model_config = ConfigDict(extra="forbid")

    drug: str
    mg: float


class _Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    doses: list[_Dose] = []

    @field_validator("name")
    @classmethod
    def _non_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the name must not be blank")
        return v


class _PlanError(UserError):
    """A plan file that cannot be used."""


def _load(path: Path, *, syntax: Literal["yaml", "json"] | None = None, raise_missing: bool = False) -> _Plan:
    return load_model_file(path, _Plan, what="a care plan", fix=FIX, error=_PlanError, syntax=syntax,
                           raise_missing=raise_missing)


def _message(path: Path, *, syntax: Literal["yaml", "json"] | None = None) -> str:
    with pytest.raises(_PlanError) as err:
        _load(path, syntax=syntax)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"{path}: ") and msg.endswith(FIX), msg
    return msg


def test_a_valid_yaml_or_json_file_is_the_model(tmp_path: Path) -> None:
    yaml_file = tmp_path / "plan.yaml"
    yaml_file.write_text("name: rest\ndoses:\n  - {drug: paracetamol, mg: 500}\n")
    json_file = tmp_path / "plan.json"
    json_file.write_text('{"name": "rest", "doses": [{"drug": "paracetamol", "mg": 500}]}')
    expected = _Plan(name="rest", doses=[_Dose(drug="paracetamol", mg=500)])
    assert _load(yaml_file) == expected
    assert _load(json_file) == expected
    assert load_model_file(str(yaml_file), _Plan, what="a care plan", fix=FIX) == expected  # a str path too


def test_a_type_adapter_validates_any_type(tmp_path: Path) -> None:
    path = tmp_path / "doses.json"
    path.write_text('[{"drug": "ibuprofen", "mg": 400}]')
    doses = load_model_file(path, TypeAdapter(list[_Dose]), what="a dose list", fix=FIX)
    assert doses == [_Dose(drug="ibuprofen", mg=400)]
    path.write_text('[{"drug": "ibuprofen", "mg": 400}, {"drug": "x"}]')
    with pytest.raises(UserError, match=r"doses\.json: not a dose list at 1\.mg: this required field is missing"):
        load_model_file(path, TypeAdapter(list[_Dose]), what="a dose list", fix=FIX)


def test_a_missing_file_names_it(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    assert _message(path) == f"{path}: cannot read the care plan (no such file). {FIX}"
    with pytest.raises(FileNotFoundError):  # for a caller whose default is an empty record
        _load(path, raise_missing=True)


def test_an_unreadable_file_says_why(tmp_path: Path) -> None:
    folder = tmp_path / "plan.yaml"
    folder.mkdir()
    assert "cannot read the care plan (Is a directory)" in _message(folder)
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes(b"name: caf\xe9\n")
    assert "cannot read the care plan: not UTF-8 text (byte 0xe9" in _message(latin1)


def test_a_yaml_syntax_error_gives_the_line(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text("name: rest\ndoses: [unclosed\n")
    msg = _message(path)
    assert msg.startswith(f"{path}: not valid YAML (") and "line 3, column 1); cannot read the care plan." in msg


def test_a_json_syntax_error_gives_the_line(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text('{"name": "rest",\n "doses": [}')
    msg = _message(path)
    assert msg.startswith(f"{path}: not valid JSON (") and "line 2" in msg and "; cannot read the care plan." in msg


def test_syntax_overrides_the_suffix(tmp_path: Path) -> None:
    path = tmp_path / "plan.txt"
    path.write_text('{"name": "rest"}')
    assert _load(path, syntax="json").name == "rest"
    path.write_text("name: rest\n")  # YAML, not JSON
    assert "not valid JSON" in _message(path, syntax="json")
    assert _load(path).name == "rest"  # any suffix but .json: YAML


def test_a_wrong_type_at_a_nested_field_names_its_path_and_value(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text("name: rest\ndoses:\n  - {drug: paracetamol, mg: 500}\n  - {drug: ibuprofen, mg: lots}\n")
    assert _message(path) == (f"{path}: not a care plan at doses.1.mg: input should be a valid number, unable to "
                              f"parse string as a number (got 'lots'). {FIX}")


def test_an_extra_field_is_named(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text("name: rest\ndoses:\n  - {drug: paracetamol, mg: 500, route: oral}\n")
    assert _message(path) == (f"{path}: not a care plan at doses.0.route: this field is not part of the format "
                              f"(check its spelling). {FIX}")


def test_a_validator_message_and_the_count_of_further_problems(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text("name: ' '\ndoses: [{drug: a}, {mg: 1}]\n")
    assert _message(path) == (f"{path}: not a care plan at name: the name must not be blank (and 2 more problems). "
                              f"{FIX}")


def test_a_file_of_the_wrong_shape_has_no_field_path(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text("- just\n- a list\n")
    assert _message(path) == (f"{path}: not a care plan: input should be a valid dictionary or instance of _Plan "
                              f"(got list). {FIX}")
    path.write_text("# only a comment\n")
    assert "(got None)" in _message(path)
