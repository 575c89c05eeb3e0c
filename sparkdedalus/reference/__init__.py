"""The pure-Python reference evaluator: the executable specification of a run.

>>> from sparkdedalus import Program
>>> from sparkdedalus.reference import run
>>> trace = run(Program.parse('log(N, P)@next :- log(N, P); log("a", "hi")@1;'), ticks=3)
>>> trace.to_json(tick=3)
{'tick': 3, 'relations': {'log': [['a', 'hi']]}}
"""

from sparkdedalus.reference.evaluator import run
from sparkdedalus.reference.trace import Message, Trace

__all__ = ["run", "Trace", "Message"]
