"""Spark plumbing that the store and the engine share, and that is not the engine:

- `session` (session.py): local classic and Spark Connect sessions configured from
  conf/ (Delta Lake's jars, quiet logs, the engine's settings);
- `jobnames` (jobnames.py): tags and descriptions of the Spark jobs a run starts.
"""
