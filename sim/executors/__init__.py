"""Where encounters run: the ``EncounterRunner`` seam and its three executors, and what a worker is given.

- ``sim.executors.base``: ``EncounterRunner`` (run one encounter, pass on its events and agent calls, return
  its result) and ``EncounterLost`` (an encounter with no result).
- ``sim.executors.local``: ``LocalEncounters``, in this process (the default).
- ``sim.executors.process``: ``ProcessEncounters``, local worker processes (``--processes N``).
- ``sim.executors.ray``: ``RayEncounters``, Ray tasks or actors (``--executor ray``).
- ``sim.executors.worker_spec``: ``WorkerSpec``, what a worker process needs to build its agent and channel
  and run an item.

The runner plans, seeds, scores and records; an executor only runs. The process and Ray executors are imported
from their own modules (they load multiprocessing or Ray), not from this face.
"""

from __future__ import annotations

from sim.executors.base import EncounterLost, EncounterRunner
from sim.executors.local import LocalEncounters

__all__ = ["EncounterLost", "EncounterRunner", "LocalEncounters"]
