"""No import cycles where layers share a level: among the modules of
`sparkdedalus.checks` and `sparkdedalus.program`, among those of
`sparkdedalus.shell`, and among those of the Spark engine (`sparkdedalus.spark`), no module imports one that imports it back, directly or
through others. Every import counts, at module level or inside a function (a
function-level import hides a cycle from Python, not from the design). A
package's `__init__` is a module like the others: `from sparkdedalus.checks
import build_program` is an edge to `sparkdedalus.checks`, `from
sparkdedalus.shell import run` one to `sparkdedalus.shell.run`.

The Spark engine's modules import each other at module level only: a
function-level import between them is how a cycle hides (the engine imported
the fault run inside `Engine.faults` and handed it the engine back)."""

from __future__ import annotations

import ast

import pytest
from test_layers import module_files

#: the groups of modules that must import each other without a cycle
GROUPS = {"checks + program": ("sparkdedalus.checks", "sparkdedalus.program"), "shell": ("sparkdedalus.shell",),
          "spark engine": ("sparkdedalus.spark",)}


def imported_modules(source: str, modules: set, in_functions: bool = False) -> set:
    """The project modules `source` imports, anywhere in it (with
    `in_functions`, inside a function only): `from P import N` is module P.N
    when that is a module, else P; `import A.B` is A.B."""
    tree = ast.parse(source)
    if in_functions:
        nodes = [n for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for n in ast.walk(f)]
    else:
        nodes = list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                      for alias in node.names}
    return found & modules


def import_graph(sources: dict) -> dict:
    """module -> the modules it imports, for `sources` (module -> its text)."""
    return {module: imported_modules(text, set(sources)) - {module} for module, text in sources.items()}


def find_cycle(graph: dict, members) -> list | None:
    """A cycle among the modules of `graph` that start with one of the prefixes
    `members` (edges to other modules left out), as [m1, m2, ..., m1]; None when
    there is none. Depth-first: a cycle is an edge back to a module on the path."""
    inside = {m for m in graph if any(m == p or m.startswith(p + ".") for p in members)}
    done, path = set(), []

    def visit(module):
        path.append(module)
        for target in sorted(graph[module] & inside):
            if target in path:
                return path[path.index(target):] + [target]
            if target not in done:
                found = visit(target)
                if found:
                    return found
        path.pop()
        done.add(module)
        return None

    for start in sorted(inside - done):
        found = visit(start)
        if found:
            return found
    return None


def project_graph() -> dict:
    return import_graph({module: path.read_text(encoding="utf-8") for module, path in module_files()})


@pytest.mark.parametrize("group", GROUPS)
def test_no_import_cycle(group):
    graph = project_graph()
    members = GROUPS[group]
    assert any(m.startswith(members[0]) for m in graph)  # the group is there
    cycle = find_cycle(graph, members)
    assert cycle is None, f"import cycle in {group}: {' -> '.join(cycle)}"


def spark_imports_in_functions(sources: dict) -> list:
    """(module, imported module) for every import of one Spark engine module
    by another inside a function, among `sources` (module -> its text)."""
    spark = {m for m in sources if m.startswith("sparkdedalus.spark.")}
    return sorted((m, imported) for m in sorted(spark)
                  for imported in imported_modules(sources[m], spark, in_functions=True) - {m})


def test_spark_modules_import_each_other_at_module_level():
    sources = {module: path.read_text(encoding="utf-8") for module, path in module_files()}
    found = spark_imports_in_functions(sources)
    assert found == [], "function-level imports in spark/: " + ", ".join(f"{m} -> {i}" for m, i in found)


def test_the_module_level_check_sees_a_lazy_import():
    sources = {"sparkdedalus.spark.engine": "import os\ndef faults():\n    from sparkdedalus.spark.faults import f\n",
               "sparkdedalus.spark.faults": "from sparkdedalus.spark.run import Run\n",
               "sparkdedalus.spark.run": "def explain():\n    from sparkdedalus.analysis.explain import explain\n"}
    assert spark_imports_in_functions(sources) == [("sparkdedalus.spark.engine", "sparkdedalus.spark.faults")]


def test_the_graph_sees_imports_inside_functions_and_of_submodules():
    graph = import_graph({
        "pkg": "",
        "pkg.a": "from pkg import b\n",
        "pkg.b": "def f():\n    import pkg.c\n",
        "pkg.c": "from pkg.a import thing\nimport os\n",
    })
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.c"}, "pkg.c": {"pkg.a"}}


def test_the_checker_says_cycle_and_names_it():
    graph = import_graph({
        "pkg": "",
        "pkg.a": "from pkg import b\n",
        "pkg.b": "def f():\n    import pkg.c\n",
        "pkg.c": "from pkg.a import thing\n",
        "other": "import pkg.a\n",
    })
    assert find_cycle(graph, ("pkg",)) == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]
    # a cycle through a module outside the group is not the group's
    assert find_cycle(graph, ("pkg.a", "pkg.b", "other")) is None


def test_the_checker_says_no_cycle_for_a_chain_and_a_diamond():
    graph = import_graph({"a": "import b\nimport c\n", "b": "import d\n", "c": "import d\n", "d": ""})
    assert find_cycle(graph, ("a", "b", "c", "d")) is None
    assert find_cycle(import_graph({"a": "import b\n", "b": "import a\n"}), ("a", "b")) == ["a", "b", "a"]
