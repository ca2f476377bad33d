"""The checks a contributor runs are the ones CI runs: pre-commit's hooks are make lint and make typecheck's
tools (docs/ARCHITECTURE.md, Conventions), from the pinned .venv, and they work offline."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _make_recipe(target: str) -> list[str]:
    text = (ROOT / "Makefile").read_text()
    block = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", text, re.M)
    assert block is not None, target
    return [line.strip().replace("$(BIN)/", "") for line in block.group(1).splitlines()]


def test_the_pre_commit_hooks_are_the_ci_checks() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    hooks = [h for repo in config["repos"] for h in repo["hooks"]]
    assert all(repo["repo"] == "local" for repo in config["repos"])  # nothing fetched
    assert all(h["language"] == "system" and h["entry"].startswith(".venv/bin/") for h in hooks)
    tools = {h["entry"].removeprefix(".venv/bin/").split()[0] for h in hooks}
    ci = {line.split()[0] for line in _make_recipe("lint") + _make_recipe("typecheck")}
    assert tools == ci == {"ruff", "lint-imports", "mypy"}
    assert "make lint typecheck" in (ROOT / ".ci" / "run").read_text()


def test_pre_commit_validates_the_config_and_runs_a_hook_offline(tmp_path: Path) -> None:
    pre_commit = BIN / "pre-commit"
    assert pre_commit.exists(), "pre-commit is a dev dependency (pyproject.toml)"
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    valid = subprocess.run([str(pre_commit), "validate-config", ".pre-commit-config.yaml"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=120)
    assert valid.returncode == 0, valid.stdout + valid.stderr
    # the ruff hook on one clean file and on one with an unused import (a copy outside the repo's own files)
    work = tmp_path / "repo"
    work.mkdir()
    shutil.copy(ROOT / ".pre-commit-config.yaml", work)
    shutil.copy(ROOT / "pyproject.toml", work)
    (work / ".venv").symlink_to(BIN.parent)
    (work / "good.py").write_text('"""A module."""\n\nfrom __future__ import annotations\n\nX = 1\n')
    (work / "bad.py").write_text('"""A module."""\n\nfrom __future__ import annotations\n\nimport os\n')
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    subprocess.run(["git", "add", "good.py", "bad.py", ".pre-commit-config.yaml"], cwd=work, check=True)

    def ruff_hook(name: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(pre_commit), "run", "ruff", "--files", name], cwd=work, env=env,
                              capture_output=True, text=True, timeout=300)

    assert ruff_hook("good.py").returncode == 0
    bad = ruff_hook("bad.py")
    assert bad.returncode == 1 and "F401" in bad.stdout, bad.stdout + bad.stderr
