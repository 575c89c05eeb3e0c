"""Do two programs show an outside observer the same facts? (docs/rewrites.md)

`observed` picks the relations an observer sees, `views` runs a program on the
reference evaluator and reads them with a rewrite's locations mapped home,
`strict` compares the two programs seed by seed, `refinement` compares their
sets of outcomes over many seeds.

>>> from sparkdedalus import Program
>>> from sparkdedalus.network import Network
>>> a = Program.parse('.output p\\np(L, X)@async :- q(L, X); q("n", 1)@1;')
>>> compare(a, a, 3, 2, Network.parse("delay=uniform(1,2)")).difference is None
True
>>> refine(a, a, 3, 2, Network.parse("delay=uniform(1,2)")).refines
True
"""

from sparkdedalus.equivalence.observed import Observed, observed_relations
from sparkdedalus.equivalence.refinement import Refinement, refine
from sparkdedalus.equivalence.strict import Comparison, Difference, compare
from sparkdedalus.equivalence.views import home_of

__all__ = ["Observed", "observed_relations", "compare", "Comparison", "Difference", "refine", "Refinement",
           "home_of"]
