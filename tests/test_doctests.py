"""Every docstring example of the package runs as written (doctest), so the
examples newcomers copy stay true to the code. Modules that start Spark in an
example would need a session: none does."""

import doctest
import importlib

import pytest
from test_layers import module_files

MODULES = sorted(name for name, _ in module_files())


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring example(s) of {name} failed"
