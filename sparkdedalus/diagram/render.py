"""Layout and rendering of a spacetime diagram as SVG, or as an HTML page holding it.

Nodes are vertical lines, left to right; ticks go downward. Every element a tool
may count carries a stable class and data attributes:

- `<g class="message delivered" data-relation data-row data-src data-dst data-send
  data-arrival>`: an arrow from the sender at its send tick to the receiver at its
  arrival tick (one per message; messages with the same ends bend apart);
- `<g class="message lost" ...>` (no data-arrival): a short dashed stroke toward the
  receiver ending in an x;
- `<g class="crash" data-node data-tick>`: an X on the node's line, which is dashed
  from there on;
- `<g class="facts" data-node data-tick>`: a dot whose hover text (`<title>`) lists
  the chosen relation's facts at that node and tick; the facts new at that tick are
  written beside it.

The text is built with xml.etree, which escapes it; the output fetches nothing.
"""

from __future__ import annotations

import html
import json
import math
import xml.etree.ElementTree as ET

from sparkdedalus.diagram.model import Diagram
from sparkdedalus.syntax.printer import format_const
from udfs.registry import spark_string

SVG_NS = "http://www.w3.org/2000/svg"
COLUMN = 170  # pixels between node lines
ROW = 56  # pixels per tick
LEFT = 64  # tick labels
TOP = 100  # the y of the first tick below a legend of one row
LEGEND_ROW = 22
MIN_WIDTH = 640
BOTTOM = 30
BEND = 14  # pixels between arrows with the same ends
BESIDE = 24  # characters of facts written beside a line
LOST = 80  # the longest stroke of a lost message, in pixels
PALETTE = ("#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f")
RED = "#d62728"

STYLE = f"""
text {{ font: 12px sans-serif; fill: #222; }}
.tick-label {{ fill: #666; text-anchor: end; }}
.tick-label.future {{ fill: #bbb; }}
.grid {{ stroke: #eee; }}
.node-name {{ font-weight: bold; text-anchor: middle; }}
.node-line {{ stroke: #444; stroke-width: 2; }}
.node-line.down {{ stroke: #aaa; stroke-dasharray: 6 4; }}
.message path {{ fill: none; stroke-width: 2; }}
.message.lost path {{ stroke: {RED}; }}
.message.lost path.stroke {{ stroke-dasharray: 4 3; }}
.crash path {{ stroke: {RED}; stroke-width: 3; fill: none; }}
.facts circle {{ fill: #fff; stroke: #444; stroke-width: 1.5; }}
.facts text {{ font-size: 11px; fill: #555; paint-order: stroke; stroke: #fff; stroke-width: 3px; }}
"""


def atom_text(relation: str, row: tuple) -> str:
    return f"{relation}({', '.join(format_const(v) for v in row)})"


def px(value: float) -> str:
    return f"{value:.1f}"


class _Canvas:
    """Where nodes and ticks are."""

    def __init__(self, diagram: Diagram, top: float):
        self.diagram = diagram
        self.top = top  # the y of the first tick
        self.columns = {node: i for i, node in enumerate(diagram.nodes)}

    def x(self, node) -> float:
        return LEFT + COLUMN * (self.columns[spark_string(node)] + 0.5)

    def y(self, tick: int) -> float:
        return self.top + ROW * (tick - self.diagram.first)


def add(parent: ET.Element, tag: str, text: str | None = None, **attributes) -> ET.Element:
    element = ET.SubElement(parent, tag, {k.rstrip("_").replace("_", "-"): str(v) for k, v in attributes.items()})
    if text is not None:
        element.text = text
    return element


def titled(parent: ET.Element, title: str, **attributes) -> ET.Element:
    group = add(parent, "g", **attributes)
    add(group, "title", title)
    return group


def svg_root(cls: str, style: str, colours) -> ET.Element:
    """An empty `<svg class=cls>` with its `style` and an arrowhead `arrow-{i}` per colour."""
    root = ET.Element("svg", {"xmlns": SVG_NS, "class": cls})
    add(root, "style", style)
    defs = add(root, "defs")
    for i, colour in enumerate(colours):
        marker = add(defs, "marker", id=f"arrow-{i}", viewBox="0 0 10 10", refX=10, refY=5,
                     markerWidth=7, markerHeight=7, orient="auto")
        add(marker, "path", d="M 0 0 L 10 5 L 0 10 z", fill=colour)
    return root


def svg_element(diagram: Diagram) -> ET.Element:
    """The diagram as an `<svg>` element."""
    relations = sorted({m.relation for m in diagram.messages})
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(relations)}
    root = svg_root("spacetime", STYLE, [colours[name] for name in relations])
    width = max(LEFT + COLUMN * len(diagram.nodes), MIN_WIDTH)
    canvas = _Canvas(diagram, TOP + _legend(root, diagram, relations, colours, width))
    _ticks(root, canvas, width)
    _nodes(root, canvas)
    _messages(root, canvas, {name: (colours[name], f"url(#arrow-{i})") for i, name in enumerate(relations)})
    _facts(root, canvas)
    height = canvas.y(diagram.end) + BOTTOM
    root.set("width", str(width))
    root.set("height", px(height))
    root.set("viewBox", f"0 0 {width} {px(height)}")
    return root


def _legend(root: ET.Element, diagram: Diagram, relations: list, colours: dict, width: int) -> int:
    """Draw the legend at the top in rows no wider than `width`; the height of its rows after the first."""
    legend = add(root, "g", class_="legend")
    items = [(f"{name} ({sum(m.relation == name for m in diagram.delivered)} delivered)", "arrow", colours[name],
              f"url(#arrow-{i})") for i, name in enumerate(relations)]
    items += [(f"lost ({len(diagram.lost)})", "lost", RED, None),
              (f"crash ({len(diagram.crashed)})", "crash", RED, None)]
    if diagram.relation is not None:
        items.append((f"facts of {diagram.relation} (hover a dot)", "dot", "#444", None))
    x, y = 10, 24
    for label, kind, colour, marker in items:
        size = 32 + 7 * len(label) + 24  # about 7 pixels a character
        if x > 10 and x + size > width:
            x, y = 10, y + LEGEND_ROW
        if kind == "arrow":
            add(legend, "line", x1=x, y1=y, x2=x + 26, y2=y, stroke=colour, stroke_width=2, marker_end=marker)
        elif kind == "lost":
            add(legend, "path", d=f"M {x} {y} L {x + 20} {y} {cross(x + 20, y)}", stroke=colour, stroke_width=2,
                 fill="none")
        elif kind == "crash":
            add(legend, "path", d=cross(x + 13, y, 6), stroke=colour, stroke_width=3, fill="none")
        else:
            add(legend, "circle", cx=x + 13, cy=y, r=4, fill="#fff", stroke=colour, stroke_width=1.5)
        add(legend, "text", label, x=x + 32, y=y + 4)
        x += size
    return y - 24


def _ticks(root: ET.Element, canvas: _Canvas, width: int) -> None:
    diagram = canvas.diagram
    group = add(root, "g", class_="ticks")
    for tick in range(diagram.first, diagram.end + 1):
        y = canvas.y(tick)
        add(group, "line", class_="grid", x1=LEFT, y1=px(y), x2=width, y2=px(y))
        if tick <= diagram.horizon:
            add(group, "text", f"tick {tick}", class_="tick-label", x=LEFT - 8, y=px(y + 4))
        else:
            label = add(group, "text", f"tick {tick}", class_="tick-label future", x=LEFT - 8, y=px(y + 4))
            add(label, "title", f"after the last committed tick ({diagram.horizon}): messages in flight arrive here")


def _nodes(root: ET.Element, canvas: _Canvas) -> None:
    diagram = canvas.diagram
    group = add(root, "g", class_="nodes")
    top, bottom = canvas.top - 16, canvas.y(diagram.end) + 14
    for node in diagram.nodes:
        x = px(canvas.x(node))
        name = add(group, "text", node, class_="node-name", x=x, y=px(canvas.top - 26))
        add(name, "title", f"node {node}")
        crash = diagram.crashes.get(node)
        if crash is None or crash > diagram.end:
            add(group, "line", class_="node-line", x1=x, y1=px(top), x2=x, y2=px(bottom))
            continue
        down = top if crash <= diagram.first else canvas.y(crash)
        if crash > diagram.first:
            add(group, "line", class_="node-line", x1=x, y1=px(top), x2=x, y2=px(down))
        add(group, "line", class_="node-line down", x1=x, y1=px(down), x2=x, y2=px(bottom))
        mark = titled(group, f"{node} crashes at tick {crash}: nothing it sends from then on is delivered",
                       class_="crash", data_node=node, data_tick=crash)
        add(mark, "path", d=cross(canvas.x(node), canvas.y(max(crash, diagram.first)), 7))


def _facts(root: ET.Element, canvas: _Canvas) -> None:
    diagram = canvas.diagram
    group = add(root, "g", class_="all-facts")
    for (node, tick), rows in sorted(diagram.facts.items(), key=lambda item: (canvas.columns[item[0][0]], item[0][1])):
        x, y = canvas.x(node), canvas.y(tick)
        listed = "\n".join("  " + _row_text(diagram.relation, row, format_const) for row in rows)
        dot = titled(group, f"{diagram.relation} at {node}, tick {tick} ({len(rows)} facts):\n{listed}",
                      class_="facts", data_node=node, data_tick=tick)
        add(dot, "circle", cx=px(x), cy=px(y), r=4)
        before = set(diagram.facts.get((node, tick - 1), ())) if tick > diagram.first else set()
        new = " ".join("+" + _row_text(diagram.relation, row, _plain) for row in rows if row not in before)
        if new:
            add(dot, "text", new if len(new) <= BESIDE else new[:BESIDE - 1] + "\u2026", x=px(x + 8), y=px(y - 6))


def _plain(value) -> str:
    return value if isinstance(value, str) else format_const(value)


def _row_text(relation: str, row: tuple, show) -> str:
    """A row without its location: its values, or the relation's name when it has none."""
    return ", ".join(show(v) for v in row) if row else relation


def _messages(root: ET.Element, canvas: _Canvas, styles: dict) -> None:
    diagram = canvas.diagram
    group = add(root, "g", class_="messages")
    seen: dict = {}
    for message in diagram.messages:
        src, dst = spark_string(message.src), spark_string(message.row[0])
        ends = (src, dst, message.send_tick, message.arrival)
        k = seen[ends] = seen.get(ends, -1) + 1
        offset = BEND * ((k + 1) // 2) * (1 if k % 2 else -1)
        x1, y1 = canvas.x(src), canvas.y(message.send_tick)
        atom = atom_text(message.relation, message.row)
        data = dict(data_relation=message.relation, data_row=json.dumps(list(message.row), ensure_ascii=False),
                    data_src=src, data_dst=dst, data_send=message.send_tick)
        colour, marker = styles[message.relation]
        if message.arrival is not None:
            title = f"{atom}: {src} \u2192 {dst}, sent at tick {message.send_tick}, arrives at tick {message.arrival}"
            arrow = titled(group, title, class_="message delivered", data_arrival=message.arrival, **data)
            x2, y2 = canvas.x(dst), canvas.y(message.arrival)
            d = _loop(x1, y1, y2, k) if src == dst else curve(x1, y1, x2, y2, offset)
            add(arrow, "path", d=d, stroke=colour, marker_end=marker)
            continue
        crash = diagram.crashes.get(src)
        why = f"{src} crashed at tick {crash}" if crash is not None and crash <= message.send_tick \
            else "omitted by the network"
        mark = titled(group, f"{atom}: {src} \u2192 {dst}, sent at tick {message.send_tick}, lost ({why})",
                       class_="message lost", **data)
        dx, dy = (40 + BEND * k, ROW) if src == dst else (canvas.x(dst) - x1, ROW)
        scale = min(0.45, LOST / math.hypot(dx, dy))  # stop short of the next node's line
        x2, y2 = x1 + dx * scale, y1 + dy * scale
        add(mark, "path", class_="stroke", d=curve(x1, y1, x2, y2, offset / 2))
        add(mark, "path", d=cross(x2, y2))


def curve(x1: float, y1: float, x2: float, y2: float, offset: float) -> str:
    """A straight path, or one bent `offset` pixels to the side at its middle."""
    if offset == 0:
        return f"M {px(x1)} {px(y1)} L {px(x2)} {px(y2)}"
    length = math.hypot(x2 - x1, y2 - y1)
    cx = (x1 + x2) / 2 - (y2 - y1) / length * offset * 2
    cy = (y1 + y2) / 2 + (x2 - x1) / length * offset * 2
    return f"M {px(x1)} {px(y1)} Q {px(cx)} {px(cy)} {px(x2)} {px(y2)}"


def _loop(x: float, y1: float, y2: float, k: int) -> str:
    """A message to oneself: a loop to the right of the line."""
    dx = 36 + BEND * k
    return f"M {px(x)} {px(y1)} C {px(x + dx)} {px(y1)} {px(x + dx)} {px(y2)} {px(x)} {px(y2)}"


def cross(x: float, y: float, size: float = 5) -> str:
    return (f"M {px(x - size)} {px(y - size)} L {px(x + size)} {px(y + size)} "
            f"M {px(x - size)} {px(y + size)} L {px(x + size)} {px(y - size)}")


def summary(diagram: Diagram) -> str:
    """One line: nodes, ticks, messages, crashes."""
    return (f"{len(diagram.nodes)} nodes, ticks {diagram.first}..{diagram.end}, "
            f"{len(diagram.delivered)} delivered, {len(diagram.lost)} lost, {len(diagram.crashed)} crashed")


def svg_text(diagram: Diagram) -> str:
    """A standalone SVG file."""
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(svg_element(diagram), encoding="unicode") + "\n"


def html_text(diagram: Diagram, title: str) -> str:
    """A self-contained HTML page: a heading, the summary, the SVG inline."""
    return page(title, f"{summary(diagram)}. Hover an arrow, a mark or a dot for details.", svg_element(diagram))


def page(title: str, intro: str, svg: ET.Element, after: str = "") -> str:
    """A self-contained HTML page (inline CSS, no scripts, nothing fetched): the
    title as heading, `intro` as a paragraph, `svg` inline, then the HTML `after`."""
    heading = html.escape(title)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{heading}</title>\n'
            "<style>body { font-family: sans-serif; margin: 16px; color: #222; } "
            "p { color: #555; } svg { display: block; }</style>\n</head>\n<body>\n"
            f"<h1>{heading}</h1>\n<p>{html.escape(intro)}</p>\n" + ET.tostring(svg, encoding="unicode") + "\n"
            + after + "</body>\n</html>\n")
