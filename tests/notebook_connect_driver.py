"""Run docs/notebook.md's python cells with `spark` a Spark Connect session
(a server with Delta Lake started in this process), in the directory given;
prints one line per cell. Used by test_notebook_doc.py (a Connect server cannot
share a process with the classic session of the other tests)."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from connect_driver import connect_session  # noqa: E402
from test_notebook_doc import NOTEBOOK, python_cells  # noqa: E402


def main(directory: str) -> None:
    spark = connect_session(delta=True)
    try:
        os.chdir(directory)
        namespace = {"spark": spark}
        for number, cell in enumerate(python_cells(NOTEBOOK.read_text()), start=1):
            exec(compile(cell, f"{NOTEBOOK.name}, cell {number}", "exec"), namespace)
            print(f"cell {number} ran on {type(namespace['spark']).__module__}", flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
