"""The layers point down: syntax -> checks/program -> analysis -> rewrite ->
(reference -> equivalence, throughput) | (pack format and Spark plumbing -> store -> Spark
engine) -> diagram -> shell. Equivalence compares runs of the reference
evaluator, so it sits on the reference side, above it, and so does throughput (the
simulated throughput of closed-loop protocols and the search for a rewrite plan). The store commits and
rebuilds the engine's packs through the pack format (pack/), below both;
sessions and job names (plumbing/) are not the engine. Every import of the
project's own modules, at module level or inside a function, goes to the same
layer or a lower one; the Spark side never imports the reference side (the
evaluator is its oracle), nor the reference side the Spark side; and
every package imports cleanly on its own, in a fresh interpreter. Where modules
share a layer, tests/test_import_cycles.py finds no import cycle among them."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

#: (module prefix, layer); the longest matching prefix decides.
LAYERS = [
    ("udfs", 0), ("sparkdedalus.errors", 0), ("sparkdedalus.values", 0), ("sparkdedalus.output", 0),
    ("sparkdedalus.syntax", 0),
    ("sparkdedalus.program", 1), ("sparkdedalus.checks", 1), ("sparkdedalus.network", 1),
    ("sparkdedalus.inputs", 1), ("sparkdedalus.derivations", 1), ("sparkdedalus.traffic", 1),
    ("sparkdedalus.hydroflow", 1),
    ("sparkdedalus.analysis", 2),
    ("sparkdedalus.rewrite", 3), ("sparkdedalus.faults", 3),
    ("sparkdedalus.reference", 4), ("sparkdedalus.pack", 4), ("sparkdedalus.plumbing", 4),
    ("sparkdedalus.store", 5), ("sparkdedalus.equivalence", 5), ("sparkdedalus.throughput", 5),
    ("sparkdedalus.spark", 6),
    ("sparkdedalus.diagram", 7),
    ("sparkdedalus.shell", 8), ("sparkdedalus.testing", 8), ("sparkdedalus", 8),
]
#: the Spark side of the layers, which never meets the reference evaluator
SPARK_SIDE = ("sparkdedalus.pack", "sparkdedalus.plumbing", "sparkdedalus.store", "sparkdedalus.spark")
#: the reference side: the evaluator, what compares its runs and what measures them
REFERENCE_SIDE = ("sparkdedalus.reference", "sparkdedalus.equivalence", "sparkdedalus.throughput")
#: pairs (importer prefix, imported prefix) that are never allowed, whatever the layers
FORBIDDEN = [(side, reference) for side in SPARK_SIDE for reference in REFERENCE_SIDE] \
    + [(reference, side) for side in SPARK_SIDE for reference in REFERENCE_SIDE] \
    + [("sparkdedalus.diagram", reference) for reference in REFERENCE_SIDE]


def _matches(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def layer_of(module: str) -> int:
    prefix, layer = max(((p, n) for p, n in LAYERS if _matches(module, p)), key=lambda pn: len(pn[0]))
    return layer


def module_files():
    for root in ("sparkdedalus", "udfs"):
        for path in sorted((REPO / root).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            yield ".".join(parts), path


def project_imports(module: str, path: Path):
    """(imported module, line) for every import of the project's own modules."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{alias.name}" if base in ("sparkdedalus", "udfs") else base for alias in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] in ("sparkdedalus", "udfs"):
                yield name, node.lineno


def test_layer_table_names_every_module():
    modules = [module for module, _ in module_files()]
    assert "sparkdedalus.shell.cli" in modules and "sparkdedalus.spark.engine" in modules
    for module in modules:
        layer_of(module)  # raises when no prefix matches


def test_imports_point_down():
    upward = []
    for module, path in module_files():
        for imported, line in project_imports(module, path):
            if layer_of(imported) > layer_of(module):
                upward.append(f"{path.relative_to(REPO)}:{line}: {module} (layer {layer_of(module)}) imports "
                              f"{imported} (layer {layer_of(imported)})")
            for importer, forbidden in FORBIDDEN:
                if _matches(module, importer) and _matches(imported, forbidden):
                    upward.append(f"{path.relative_to(REPO)}:{line}: {module} imports {imported}")
    assert not upward, "\n".join(upward)


def test_the_checker_catches_an_upward_import(tmp_path):
    """The check above can say no: an engine module importing the CLI is upward."""
    fake = tmp_path / "engine.py"
    fake.write_text("def f():\n    from sparkdedalus.shell.cli import main\n")
    ((imported, line),) = project_imports("sparkdedalus.spark.engine", fake)
    assert (imported, line) == ("sparkdedalus.shell.cli", 2)
    assert layer_of(imported) > layer_of("sparkdedalus.spark.engine")


PACKAGES = ["udfs", "sparkdedalus.syntax", "sparkdedalus.checks", "sparkdedalus.program", "sparkdedalus.network",
            "sparkdedalus.inputs", "sparkdedalus.analysis", "sparkdedalus.reference", "sparkdedalus.equivalence",
            "sparkdedalus.throughput",
            "sparkdedalus.pack", "sparkdedalus.plumbing", "sparkdedalus.spark",
            "sparkdedalus.spark.engine", "sparkdedalus.store", "sparkdedalus.store.read", "sparkdedalus.store.store",
            "sparkdedalus.diagram", "sparkdedalus.shell.cli", "sparkdedalus.shell.jobs", "sparkdedalus.testing"]


@pytest.mark.parametrize("package", PACKAGES)
def test_package_imports_alone(package):
    # judged by what it printed: delta-rs can abort at interpreter exit after a good import
    # (exit 134, "terminate called without an active exception"; an upstream teardown race)
    result = subprocess.run([sys.executable, "-c", f"import {package}; print('imported')"], cwd=REPO,
                            capture_output=True, text=True, timeout=300)
    assert result.stdout.strip() == "imported", result.stderr
