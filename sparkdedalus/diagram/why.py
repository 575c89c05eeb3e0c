"""The derivation graph of `why --format html`, drawn on a spacetime grid.

It draws the JSON of `reference.why` (`Why.to_json()` or `WhyNot.to_json()`,
docs/provenance.md): the diagram layer reads no evaluator. Locations are columns
(left to right in the order of their values) and ticks go downward, as in the
spacetime diagrams (`render`), whose helpers it uses; a tick holds as many rows
as its longest chain of same-tick derivations. Every element a tool may count
carries a stable class and data attributes:

- `<g class="fact" data-id data-relation data-row data-tick data-location>`: a box
  `rel(values)@tick` in its location's column and its tick's row; the facts of the
  program, inputs and crashes say so inside their box (`k/n` when a fact has
  several derivations); `class="fact not-holding"` for a fact that does not hold;
- `<g class="derivation" data-fact data-kind data-pos data-k data-of>`: a dot with
  the rule's `file:line` (and `k/n` among alternatives, each in its own colour),
  the negated atoms under it ("r(...) was absent at T"), edges from its body facts
  to it and an arrow from it to the fact it derives; `class="derivation closest"`
  for the rule that came closest to a fact that does not hold (its missing atoms,
  negated atoms present and false comparisons under it);
- `<g class="message delivered" data-relation data-row data-src data-dst data-send
  data-arrival>`: a message derivation's arrow, from its dot below the sender's body
  facts at the send tick to the receiver's fact at the arrival tick; `class="message
  lost"` (no data-arrival), for a fact that does not hold: a dashed stroke ending in x.

>>> graph = {"holds": True, "fact": 0, "facts": [
...     {"id": 0, "relation": "log", "row": ["c", "hi"], "tick": 2, "derivations": [
...         {"kind": "message", "rule": 0, "pos": "b.ded:3", "text": "log(M, P)@async :- bcast(N, P), node(N, M);",
...          "absent": [], "message": {"sender": "a", "send_tick": 1, "receiver": "c", "arrival": 2}, "body": [1]}]},
...     {"id": 1, "relation": "bcast", "row": ["a", "hi"], "tick": 1, "derivations": [
...         {"kind": "fact", "rule": None, "pos": "b.ded:5", "text": None, "absent": [], "message": None, "body": []}]}]}
>>> summary(graph)
'log("c", "hi")@2 holds: 2 facts, 1 derivation by rules (1 message)'
>>> svg = svg_element(graph)
>>> sorted(g.get("data-location") for g in svg.iter("g") if g.get("class") == "fact")
['a', 'c']
"""

from __future__ import annotations

import html
import json
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from sparkdedalus.diagram.model import node_order
from sparkdedalus.diagram.render import LEFT, PALETTE, RED, add, cross, curve, page, px, svg_root, titled
from sparkdedalus.syntax.printer import format_const
from udfs.registry import spark_string

CHAR = 7  # pixels a character, about
LINE = 14  # pixels a line of text
PAD = 8  # inside a box
GAP = 16  # between boxes, and a column's margin
MIN_COLUMN = 170
HEADER = 50  # node names above the first tick
COLOURS = PALETTE + (RED,)  # alternatives k = 1, 2, ...; the closest rule
LEAVES = {"fact": "fact of the program ({pos})", "input": "input row (edb or .input)",
          "crash": "crash of the failure model (--network)"}

STYLE = f"""
text {{ font: 12px sans-serif; fill: #222; }}
.tick-label {{ fill: #666; text-anchor: end; }}
.grid {{ stroke: #eee; }}
.node-name {{ font-weight: bold; text-anchor: middle; }}
.node-line {{ stroke: #ddd; stroke-width: 2; }}
.fact rect {{ fill: #fff; stroke: #444; stroke-width: 1.5; }}
.fact text.source {{ fill: #666; font-size: 11px; }}
.fact.not-holding rect {{ stroke: {RED}; stroke-dasharray: 5 3; }}
.derivation text {{ font-size: 11px; }}
.derivation text.note {{ fill: #555; }}
.derivation.closest text.note {{ fill: {RED}; }}
.edge {{ fill: none; stroke-width: 1.5; }}
.message path {{ fill: none; stroke-width: 2; }}
.message.lost path {{ stroke: {RED}; }}
.message.lost path.stroke {{ stroke-dasharray: 4 3; }}
"""

INTRO = ("Facts are boxes in their location's column and their tick's row. A dot is a derivation: edges "
         "come from the facts its rule joined, an arrow goes to the fact it derives; a message's arrow goes "
         "from the sender at the send tick to the receiver at the arrival tick. Alternatives are numbered "
         "k/n and coloured apart. Hover a dot for its rule.")


@dataclass
class _Box:
    """A fact drawn: its text lines, and where it is once laid out."""

    id: int
    relation: str
    row: tuple
    tick: int
    lines: list
    holds: bool = True
    sources: list = field(default_factory=list)  # the file:line of its facts of the program, in full
    level: int = 0
    x: float = 0.0  # the left edge, within its column until placed
    y: float = 0.0

    @property
    def location(self) -> str:
        return spark_string(self.row[0])

    @property
    def width(self) -> float:
        return max(len(line) for line in self.lines) * CHAR + 2 * PAD

    @property
    def height(self) -> float:
        return len(self.lines) * LINE + PAD


@dataclass
class _Step:
    """A derivation drawn as a dot: the box it derives, its body boxes, its label
    and the lines under it; a message's `message` dict (docs/provenance.md)."""

    head: _Box
    body: list
    kind: str
    pos: str
    title: str
    k: int
    of: int
    notes: list = field(default_factory=list)
    message: dict | None = None
    closest: bool = False
    x: float = 0.0
    y: float = 0.0

    @property
    def label(self) -> str:
        count = f"{self.k}/{self.of} " if self.of > 1 else ""
        if self.closest:
            return f"closest: {short(self.pos)}"
        if self.kind in ("lost", "late"):
            m = self.message
            fate = "lost" if m["arrival"] is None else f"arrives at tick {m['arrival']}"
            return (f"{pattern_text(self.head.relation, self.head.row)} sent by {_value(m['sender'])} at tick {m['send_tick']} "
                    f"to {_value(m['receiver'])}: {fate}")
        if self.message is not None:
            m = self.message
            return (f"{count}{short(self.pos)}: {_value(m['sender'])}@{m['send_tick']} \u2192 "
                    f"{_value(m['receiver'])}@{m['arrival']}")
        return f"{count}{'@next ' if self.kind == 'next' else ''}{short(self.pos)}"

    @property
    def lines(self) -> int:
        return 1 + len(self.notes)

    @property
    def colour(self) -> str:
        return RED if self.closest else PALETTE[(self.k - 1) % len(PALETTE)]

    @property
    def column(self) -> str:
        """The column of its dot: the sender's for a message, else the derived fact's."""
        return spark_string(self.message["sender"]) if self.message is not None else self.head.location

    @property
    def row_tick(self) -> int:
        """The tick below whose rows a message's dot sits (its send tick)."""
        return self.message["send_tick"]


def short(pos: str) -> str:
    """`file:line` without the file's directory, as the drawing writes it.

    >>> short("examples/faults/three_phase_commit.ded:103")
    'three_phase_commit.ded:103'
    """
    return os.path.basename(pos)


def _value(value) -> str:
    return value if isinstance(value, str) else format_const(value)


def pattern_text(relation: str, values) -> str:
    """`rel(values)`, None as `_`.

    >>> pattern_text("log", ["c", None, 3])
    'log("c", _, 3)'
    """
    return f"{relation}({', '.join('_' if v is None else format_const(v) for v in values)})"


def _fact_text(fact: dict) -> str:
    return f"{pattern_text(fact['relation'], fact['row'])}@{fact['tick']}"


# ------------------------------------------------------------ from the JSON of `why`

def _holding(graph: dict) -> tuple:
    """(boxes, steps) of a fact that holds."""
    boxes = {f["id"]: _Box(f["id"], f["relation"], tuple(f["row"]), f["tick"], [_fact_text(f)])
             for f in graph["facts"]}
    steps = []
    for fact in graph["facts"]:
        box, found = boxes[fact["id"]], fact["derivations"]
        for k, d in enumerate(found, 1):
            count = f"{k}/{len(found)}: " if len(found) > 1 else ""
            if d["kind"] in LEAVES:
                box.lines.append(count + LEAVES[d["kind"]].format(pos=short(d["pos"])))
                box.sources.append(d["pos"])
                continue
            notes = [f"{pattern_text(a['relation'], a['pattern'])} was absent at {a['tick']}" for a in d["absent"]]
            steps.append(_Step(box, [boxes[i] for i in d["body"]], d["kind"], d["pos"], d["text"], k, len(found),
                               notes, d["message"]))
    return list(boxes.values()), steps


def _not_holding(graph: dict) -> tuple:
    """(boxes, steps) of a fact that does not hold: its box, the closest rule's dot
    with the facts it matched and the atoms it missed, and its messages that were
    lost or arrived at another tick (kind `lost`, `late`), each a dot at its sender."""
    target = _Box(0, graph["relation"], tuple(graph["row"]), graph["tick"], [_fact_text(graph), "does not hold"],
                  holds=False)
    boxes, steps, c = [target], [], graph["closest"]
    if c is None:
        target.lines.append(f"no rule derives {graph['relation']}")
    else:
        body = [_Box(i, f["relation"], tuple(f["row"]), f["tick"], [_fact_text(f)])
                for i, f in enumerate(c["matched"], 1)]
        boxes += body
        atoms = len(c["matched"]) + len(c["missing"])
        notes = [f"at tick {c['tick']}, {len(c['matched'])} of {atoms} body atoms matched"] \
            + [f"missing: {text}" for text in c["missing"]] \
            + [f"present: {text} (negated in the rule)" for text in c["present"]] \
            + [f"false: {text}" for text in c["failed"]]
        steps.append(_Step(target, body, "closest", c["pos"], c["text"], 1, 1, notes, closest=True))
    steps += [_Step(target, [], "lost" if m["arrival"] is None else "late", "", None, 1, 1, message=m)
              for m in graph["messages"]]
    return boxes, steps


# ------------------------------------------------------------ layout

class _Layout:
    """Columns by location, rows by tick: each tick's rows hold its boxes by level
    (a box below the same-tick boxes its derivations join), each row with room above
    for the dots of the derivations of its boxes, and each tick room below for the
    dots of the messages sent then."""

    def __init__(self, boxes: list, steps: list):
        self.boxes, self.steps = boxes, steps
        sent = [s.message for s in steps if s.message is not None]
        self.columns = node_order([b.row[0] for b in boxes] + [v for m in sent for v in (m["sender"], m["receiver"])])
        ticks = [b.tick for b in boxes] + [t for m in sent for t in (m["send_tick"], m["arrival"]) if t]
        self.first, self.last = min(ticks), max(ticks)
        self._levels()
        self._columns()
        self._rows()

    def _levels(self) -> None:
        below: dict = {}  # box id -> same-tick boxes it is derived from
        for step in self.steps:
            below.setdefault(id(step.head), []).extend(b for b in step.body if b.tick == step.head.tick)
        done: dict = {}

        def level(box) -> int:  # the JSON graph of `why` is acyclic
            if id(box) not in done:
                done[id(box)] = 1 + max((level(b) for b in below.get(id(box), ())), default=-1)
            return done[id(box)]

        for box in self.boxes:
            box.level = level(box)

    def right(self, column: str) -> float:
        """The right edge of a column."""
        i = self.columns.index(column)
        return self.left[self.columns[i + 1]] if i + 1 < len(self.columns) else self.width - GAP

    def _cells(self) -> dict:
        cells: dict = {}
        for box in self.boxes:
            cells.setdefault((box.location, box.tick, box.level), []).append(box)
        return cells

    def _dots(self) -> dict:
        """(column, tick, level) -> the steps whose dots sit above that row; a
        message's under its send tick (level None)."""
        dots: dict = {}
        for step in self.steps:
            at = (step.column, step.row_tick, None) if step.message else (step.column, step.head.tick, step.head.level)
            dots.setdefault(at, []).append(step)
        return dots

    def _columns(self) -> None:
        """Each column as wide as its widest row of boxes and of dot labels."""
        widths = dict.fromkeys(self.columns, MIN_COLUMN)
        for (column, _, _), cell in self._cells().items():
            x = GAP
            for box in cell:
                box.x = x
                x += box.width + GAP
            widths[column] = max(widths[column], x)
        for (column, _, _), steps in self._dots().items():
            for step in steps:  # a dot above its fact's box, a message's under its sender's body facts
                beside = [b.x for b in step.body if b.location == column]
                step.x = (min(beside) if step.message and beside else GAP if step.message
                          else step.head.x + 12 * (step.k - 1)) + PAD  # alternatives' arrows apart
                widths[column] = max(widths[column], step.x + GAP + max(map(len, [step.label] + step.notes)) * CHAR)
        self.left, x = {}, LEFT
        for column in self.columns:
            self.left[column] = x
            x += widths[column]
        self.width = x + GAP

    def _rows(self) -> None:
        """The y of every box and dot, and of every tick."""
        cells, dots = self._cells(), self._dots()
        self.tick_y, y = {}, HEADER
        for tick in range(self.first, self.last + 1):
            self.tick_y[tick] = y
            levels = 1 + max((b.level for b in self.boxes if b.tick == tick), default=0)
            for level in range(levels):
                y = self._place_dots(dots, tick, level, y) if any(
                    (c, tick, level) in dots for c in self.columns) else y + GAP
                row = [b for c in self.columns for b in cells.get((c, tick, level), ())]
                for box in row:
                    box.y = y
                    box.x += self.left[box.location]
                y += max((b.height for b in row), default=LINE) + GAP
            y = self._place_dots(dots, tick, None, y)
        self.tick_y[self.last + 1] = y
        self.height = y + GAP

    def _place_dots(self, dots: dict, tick: int, level, y: float) -> float:
        """Place the dots of a row (one line each, and their notes), per column; the y below them."""
        bottom = y
        for column in self.columns:
            line = y + LINE
            for step in dots.get((column, tick, level), ()):
                step.x, step.y = self.left[column] + step.x, line
                line += step.lines * LINE
            bottom = max(bottom, line)
        return bottom


# ------------------------------------------------------------ drawing

def svg_element(graph: dict) -> ET.Element:
    """The derivation graph of `why`'s JSON `graph` as an `<svg>` element."""
    boxes, steps = (_holding if graph["holds"] else _not_holding)(graph)
    layout = _Layout(boxes, steps)
    root = svg_root("derivations", STYLE, COLOURS)
    _grid(root, layout)
    for step in steps:
        if step.kind in ("lost", "late"):
            _message(root, layout, step)
        else:
            _step(root, step, f"url(#arrow-{COLOURS.index(step.colour)})")
    for box in boxes:
        _box(root, box)
    root.set("width", px(layout.width))
    root.set("height", px(layout.height))
    root.set("viewBox", f"0 0 {px(layout.width)} {px(layout.height)}")
    return root


def _grid(root: ET.Element, layout: _Layout) -> None:
    group = add(root, "g", class_="ticks")
    for tick in range(layout.first, layout.last + 1):
        y = layout.tick_y[tick]
        add(group, "line", class_="grid", x1=LEFT, y1=px(y), x2=px(layout.width), y2=px(y))
        add(group, "text", f"tick {tick}", class_="tick-label", x=LEFT - 8, y=px(y + LINE))
    group = add(root, "g", class_="nodes")
    for column in layout.columns:
        x = (layout.left[column] + layout.right(column)) / 2
        name = add(group, "text", column, class_="node-name", x=px(x), y=px(HEADER - 22))
        add(name, "title", f"node {column}")
        add(group, "line", class_="node-line", x1=px(x), y1=px(HEADER - 12), x2=px(x), y2=px(layout.height - GAP))


def _box(root: ET.Element, box: _Box) -> None:
    title = box.lines + [f"at {box.location}"] + [f"written at {pos}" for pos in box.sources]
    group = titled(root, "\n".join(title), class_="fact" if box.holds else
                   "fact not-holding", data_id=box.id, data_relation=box.relation,
                   data_row=json.dumps(list(box.row), ensure_ascii=False), data_tick=box.tick,
                   data_location=box.location)
    add(group, "rect", x=px(box.x), y=px(box.y), width=px(box.width), height=px(box.height), rx=4)
    for i, line in enumerate(box.lines):
        add(group, "text", line, class_="source" if i else "fact-text", x=px(box.x + PAD),
            y=px(box.y + LINE * (i + 1)))


def _step(root: ET.Element, step: _Step, marker: str) -> None:
    title = f"{step.label}\n{step.pos}" + ("" if step.title is None else f": {step.title}")
    group = titled(root, "\n".join([title] + step.notes), class_="derivation closest" if step.closest else
                   "derivation", data_fact=step.head.lines[0], data_kind=step.kind, data_pos=step.pos,
                   data_k=step.k, data_of=step.of)
    for body in step.body:
        add(group, "path", class_="edge", stroke=step.colour,
            d=curve(body.x + body.width / 2, body.y + body.height, step.x, step.y, 0))
    head = (step.head.x + step.head.width / 2, step.head.y)
    if step.message is None:
        dashed = {"stroke_dasharray": "5 3"} if step.closest else {}
        add(group, "path", class_="edge", stroke=step.colour, marker_end=marker, d=curve(step.x, step.y, *head, 0),
            **dashed)
    add(group, "circle", cx=px(step.x), cy=px(step.y), r=4, fill=step.colour)
    add(group, "text", step.label, x=px(step.x + 8), y=px(step.y + 4))
    for i, note in enumerate(step.notes, 1):
        add(group, "text", note, class_="note", x=px(step.x + 8), y=px(step.y + 4 + LINE * i))
    if step.message is not None:
        m = step.message
        arrow = titled(group, f"message {step.head.lines[0]}: {_value(m['sender'])} at tick {m['send_tick']} "
                              f"\u2192 {_value(m['receiver'])} at tick {m['arrival']}",
                       class_="message delivered", **_message_data(step.head.relation, step.head.row, m),
                       data_arrival=m["arrival"])
        add(arrow, "path", d=curve(step.x, step.y, *head, 0), stroke=step.colour, marker_end=marker)


def _message_data(relation: str, row, m: dict) -> dict:
    return dict(data_relation=relation, data_row=json.dumps(list(row), ensure_ascii=False),
                data_src=spark_string(m["sender"]), data_dst=spark_string(m["receiver"]), data_send=m["send_tick"])


def _message(root: ET.Element, layout: _Layout, step: _Step) -> None:
    """A message of a fact that does not hold, from its dot at the sender: lost (a
    dashed stroke toward the receiver ending in x), or arriving at another tick (a
    dashed arrow to the receiver's line at that tick)."""
    m, head = step.message, step.head
    dst = spark_string(m["receiver"])
    x2 = (layout.left[dst] + layout.right(dst)) / 2
    add(root, "circle", cx=px(step.x), cy=px(step.y), r=3, fill="#888")
    add(root, "text", step.label, x=px(step.x + 8), y=px(step.y + 4))
    data = _message_data(head.relation, head.row, m)
    if m["arrival"] is None:
        mark = titled(root, step.label, class_="message lost", **data)
        x2, y2 = step.x + (x2 - step.x) * 0.4, step.y + 2 * LINE
        add(mark, "path", class_="stroke", d=curve(step.x, step.y, x2, y2, 0))
        add(mark, "path", d=cross(x2, y2))
        return
    arrow = titled(root, step.label, class_="message delivered", data_arrival=m["arrival"], **data)
    add(arrow, "path", d=curve(step.x, step.y, x2, layout.tick_y[m["arrival"]] + LINE, 0), stroke="#888",
        stroke_dasharray="4 3", marker_end=f"url(#arrow-{len(PALETTE) - 1})")


# ------------------------------------------------------------ the page

def summary(graph: dict) -> str:
    """One line: the fact, whether it holds, what the graph shows."""
    if not graph["holds"]:
        c = graph["closest"]
        closest = "no rule derives it" if c is None else \
            f"closest rule {c['pos']} ({len(c['matched'])} of {len(c['matched']) + len(c['missing'])} body atoms matched)"
        late = len(graph["messages"])
        return f"{_fact_text(graph)} does not hold: {closest}, {late} message{'s' * (late != 1)} lost or late"
    found = [d for f in graph["facts"] for d in f["derivations"]]
    ruled = sum(d["kind"] not in LEAVES for d in found)
    messages = sum(d["kind"] == "message" for d in found)
    root = next(f for f in graph["facts"] if f["id"] == graph["fact"])
    return (f"{_fact_text(root)} holds: {len(graph['facts'])} facts, {ruled} derivation{'s' * (ruled != 1)} "
            f"by rules ({messages} message{'s' * (messages != 1)})")


def html_text(graph: dict, text: str | None = None) -> str:
    """A self-contained HTML page of `why`'s JSON `graph`: a heading, the summary,
    the graph, and `text` (the text form of the answer) under it."""
    head = _fact_text(graph) if not graph["holds"] else _fact_text(
        next(f for f in graph["facts"] if f["id"] == graph["fact"]))
    after = "" if text is None else f"<h2>As text</h2>\n<pre>{html.escape(text)}</pre>\n"
    return page(f"Why {head}", f"{summary(graph)}. {INTRO}", svg_element(graph), after)
