"""``python -m sim.cli``: the ``encsim`` command line, with SIGTERM handled like Ctrl-C (``encsim_entry.run_cli``)."""

from __future__ import annotations

import sys

from sim.cli import main

if __name__ == "__main__":
    try:  # SIGTERM handled like Ctrl-C (exit 143); the console script also covers the imports (encsim_entry)
        from encsim_entry import run_cli
    except ImportError:  # an install from before encsim_entry existed
        sys.exit(main())
    sys.exit(run_cli(main))
