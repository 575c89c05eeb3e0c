"""The pack format: how a tick's facts, `@next` facts, messages and GC rows of every
relation travel as one DataFrame. The Spark engine builds packs, the store commits
them and rebuilds them; both import this package, which imports neither.

- `columns` (columns.py): the names and kinds the engine's frames share with the
  store (no pyspark);
- `layout` (layout.py): `Layout`, where each relation's arguments live in a pack.
"""
