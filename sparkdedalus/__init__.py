"""sparkdedalus: Dedalus (Datalog in time and space) on Spark.

>>> from sparkdedalus import Program
>>> Program.parse('p(N, X)@next :- p(N, X); p("a", 1)@1;').persisted
frozenset({'p'})

In a notebook, with its own `spark` (classic or Spark Connect):

    from sparkdedalus import Engine, Program
    run = Engine(spark).run(Program.from_files("examples/broadcast.ded"), ticks=5)
    run.relation("log", tick=2).show()

`Engine` is imported on first use, so the front end never imports pyspark.
"""

from sparkdedalus.program import Program
from sparkdedalus.syntax.diagnostics import DiagnosticError

__all__ = ["Program", "Engine", "DiagnosticError"]


def __getattr__(name: str):
    if name == "Engine":
        from sparkdedalus.spark.engine import Engine
        return Engine
    raise AttributeError(f"module 'sparkdedalus' has no attribute '{name}'")
