"""Finding and checking run directories: ``RunWatchError`` and ``newest_run``."""

from __future__ import annotations

from pathlib import Path

from sim.records import EncSimError, RunLayout


class RunWatchError(EncSimError):
    """A run directory the dashboard cannot follow; the message names the path and the fix."""


def check_run_dir(run_dir: Path) -> None:
    """Raise RunWatchError unless ``run_dir`` is an existing run directory (one with run.json)."""
    run_dir = Path(run_dir)
    if not run_dir.exists():
        raise RunWatchError(
            f"{run_dir}: no such run directory. Give the folder that `encsim run` or `encsim live` created "
            "(e.g. runs/<id>); check the spelling, or start a run first.")
    if not run_dir.is_dir():
        raise RunWatchError(f"{run_dir}: is a file, not a run directory. Give the folder that holds its run.json "
                            "(e.g. runs/<id>).")
    if not RunLayout(run_dir).run.is_file():
        raise RunWatchError(
            f"{run_dir}: not a run directory (no {RunLayout.RUN_FILE}). Give the folder that `encsim run` or "
            "`encsim live` created, e.g. runs/<id>, not its parent or a file inside it.")


def newest_run(runs_root: Path = Path("runs")) -> Path:
    """The newest run under ``runs_root``: the sub-folder whose run.json was modified last."""
    runs_root = Path(runs_root)
    if not runs_root.is_dir():
        raise RunWatchError(
            f"{runs_root}: no such folder of runs. Start a run with `encsim run --model ...` (it writes "
            f"{runs_root}/<id>), or give the run directory to watch explicitly.")
    best: tuple[int, str, Path] | None = None
    for child in runs_root.iterdir():
        meta = RunLayout(child).run
        try:
            mtime = meta.stat().st_mtime_ns
        except OSError:
            continue
        candidate = (mtime, child.name, child)
        if best is None or candidate[:2] > best[:2]:
            best = candidate
    if best is None:
        raise RunWatchError(
            f"{runs_root}: holds no run (no sub-folder with {RunLayout.RUN_FILE}). Start a run with "
            "`encsim run --model ...`, or give the run directory to watch explicitly.")
    return best[2]
