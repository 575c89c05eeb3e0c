"""A front end for Hydroflow's `datalog!` dialect (docs/hydroflow.md): read the
`datalog!` string of one Rust file per role into one distributed program, and
write a program back as one `datalog!` string per component.

>>> from sparkdedalus.hydroflow import HydroflowError, import_hydroflow
>>> issubclass(HydroflowError, Exception)
True
"""

from sparkdedalus.hydroflow.errors import HydroflowError
from sparkdedalus.hydroflow.load import checked, import_hydroflow, import_text

__all__ = ["HydroflowError", "checked", "import_hydroflow", "import_text"]
