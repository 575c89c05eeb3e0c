"""sparkdedalus: Dedalus (Datalog in time and space) on Spark.

>>> from sparkdedalus import Program
>>> Program.parse('p(N, X)@next :- p(N, X); p("a", 1)@1;').persisted
frozenset({'p'})
"""

from sparkdedalus.program import Program
from sparkdedalus.syntax.diagnostics import DiagnosticError

__all__ = ["Program", "DiagnosticError"]
