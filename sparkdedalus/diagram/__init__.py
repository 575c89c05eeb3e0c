"""Spacetime diagrams of stored runs: `model` reads what to draw from a run
directory (delta-rs, no Spark), `render` lays it out as SVG or an HTML page.

    from sparkdedalus.diagram import from_store, html_text, svg_text
    diagram = from_store("runs/b", relation="log")
    open("run.html", "w").write(html_text(diagram, "runs/b"))
"""

from sparkdedalus.diagram.model import Diagram, from_store
from sparkdedalus.diagram.render import html_text, summary, svg_text

__all__ = ["Diagram", "from_store", "html_text", "summary", "svg_text"]
