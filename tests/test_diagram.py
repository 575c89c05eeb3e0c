"""Spacetime diagrams (`sparkdedalus.diagram`, `sparkdedalus diagram`): layout and
rendering of hand-made runs; diagrams of stored runs of examples/broadcast.ded,
whose messages are counted by hand from its header; a headless Chromium screenshot.

broadcast.ded sends "hi" a->b,c,d at tick 1, "yo" b->a,c at tick 2 and "bye"
a->b,c,d at tick 3, each arriving one tick later: 8 messages. Under
`omit=a>c@1,crash=b@2` a->c "hi" is omitted and b's two "yo" are lost (b crashed
at 2): 5 delivered, 3 lost."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from frontend_helpers import exit_code
from sparkdedalus.shell.cli import main
from sparkdedalus.diagram import Diagram, from_store, html_text, svg_text
from sparkdedalus.diagram.model import node_order
from sparkdedalus.diagram.render import BOTTOM, ROW, SVG_NS, TOP
from sparkdedalus.reference.trace import Message
from store_helpers import EXAMPLES

NS = "{" + SVG_NS + "}"
LOSSY = "omit=a>c@1,crash=b@2"

BROADCAST_ARROWS = {("a", "b", 1, 2, "hi"), ("a", "c", 1, 2, "hi"), ("a", "d", 1, 2, "hi"),
                    ("b", "a", 2, 3, "yo"), ("b", "c", 2, 3, "yo"),
                    ("a", "b", 3, 4, "bye"), ("a", "c", 3, 4, "bye"), ("a", "d", 3, 4, "bye")}
LOSSY_LOST = {("a", "c", 1, "hi"), ("b", "a", 2, "yo"), ("b", "c", 2, "yo")}


def parse(text: str) -> ET.Element:
    if text.startswith("<!DOCTYPE"):
        text = text[text.index("<svg"):text.index("</svg>") + len("</svg>")]
    return ET.fromstring(text.split("?>", 1)[-1] if text.startswith("<?xml") else text)


def by_class(root: ET.Element, name: str) -> list:
    return [e for e in root.iter() if e.get("class") == name]


def title(element: ET.Element) -> str:
    return element.find(NS + "title").text


def arrows(root: ET.Element) -> set:
    return {(e.get("data-src"), e.get("data-dst"), int(e.get("data-send")), int(e.get("data-arrival")),
             e.get("data-row").split('"')[3]) for e in by_class(root, "message delivered")}


def lost(root: ET.Element) -> set:
    return {(e.get("data-src"), e.get("data-dst"), int(e.get("data-send")), e.get("data-row").split('"')[3])
            for e in by_class(root, "message lost")}


def diagram(messages=(), crashes=None, facts=None, nodes=("a", "b", "c"), first=1, last=3, horizon=3):
    return Diagram(nodes, first, last, horizon, tuple(messages), crashes or {}, "log" if facts else None, facts or {})


# -- layout and rendering, no Spark ---------------------------------------------------------------

def test_one_arrow_per_delivered_message_and_one_mark_per_lost_one():
    root = parse(svg_text(diagram([
        Message("log", ("b", "hi"), "a", 1, 2),
        Message("log", ("b", "ho"), "a", 1, 2),  # same ends: bends away from the first
        Message("log", ("a", "me"), "a", 1, 3),  # to itself: a loop
        Message("log", ("c", "x"), "a", 2, None),  # omitted
        Message("log", ("a", "y"), "c", 2, None),  # c crashed at 2
    ], crashes={"c": 2})))
    delivered = by_class(root, "message delivered")
    assert arrows(root) == {("a", "b", 1, 2, "hi"), ("a", "b", 1, 2, "ho"), ("a", "a", 1, 3, "me")}
    assert title(delivered[0]) == 'log("b", "hi"): a \u2192 b, sent at tick 1, arrives at tick 2'
    paths = [e.find(NS + "path").get("d") for e in delivered]
    assert " L " in paths[0] and " Q " in paths[1] and " C " in paths[2]
    assert lost(root) == {("a", "c", 2, "x"), ("c", "a", 2, "y")}
    assert [title(e).rsplit("(", 1)[1] for e in by_class(root, "message lost")] == [
        "omitted by the network)", "c crashed at tick 2)"]
    assert all(e.get("data-arrival") is None for e in by_class(root, "message lost"))


def test_a_crashed_node_gets_a_mark_and_a_dashed_line_from_its_crash_tick():
    root = parse(svg_text(diagram(crashes={"b": 2, "c": 9})))  # c crashes after the last tick drawn
    [mark] = by_class(root, "crash")
    assert (mark.get("data-node"), mark.get("data-tick")) == ("b", "2")
    assert title(mark) == "b crashes at tick 2: nothing it sends from then on is delivered"
    [down] = by_class(root, "node-line down")
    assert float(down.get("y1")) == TOP + ROW  # tick 2
    assert len(by_class(root, "node-line")) == 3  # a, b before its crash, c
    assert by_class(parse(svg_text(diagram(crashes={"b": 1}))), "node-line down")[0].get("y1") == "84.0"  # the top


def test_facts_are_listed_on_hover_and_the_new_ones_beside_the_line():
    facts = {("a", 1): (("hi",),), ("a", 2): (("hi",), ("yo",)), ("b", 2): ((1, True),),
             ("c", 3): (("a very long payload that does not fit",),)}
    root = parse(svg_text(diagram(facts=facts)))
    dots = {(e.get("data-node"), e.get("data-tick")): e for e in by_class(root, "facts")}
    assert set(dots) == {("a", "1"), ("a", "2"), ("b", "2"), ("c", "3")}
    assert title(dots["a", "2"]) == 'log at a, tick 2 (2 facts):\n  "hi"\n  "yo"'
    assert dots["a", "2"].find(NS + "text").text == "+yo"
    assert title(dots["b", "2"]) == "log at b, tick 2 (1 facts):\n  1, true"
    beside = dots["c", "3"].find(NS + "text").text
    assert len(beside) == 24 and beside.endswith("\u2026")


def test_text_is_escaped_and_the_page_fetches_nothing():
    node, payload = '<b&"x>', "</title><script>alert(1)</script>"
    page = html_text(diagram([Message("log", (node, payload), "a", 1, 2)], nodes=("a", node)), "run <script>")
    assert "<script>" not in page
    assert re.findall(r"https?://[^\"\s]+", page) == [SVG_NS]
    assert not re.search(r"(?<![-\w])(src|href)=|@import|url\((?!#)", page)
    root = parse(page)
    [arrow] = by_class(root, "message delivered")
    assert arrow.get("data-dst") == node
    assert title(arrow) == f'log("<b&\\"x>", "</title><script>alert(1)</script>"): a \u2192 {node}, ' \
                           "sent at tick 1, arrives at tick 2"
    assert [e.text for e in by_class(root, "node-name")] == ["a", node]


def test_arrivals_after_the_last_tick_extend_the_axis():
    root = parse(svg_text(diagram([Message("log", ("b", "late"), "a", 2, 4)], last=2, horizon=2)))
    assert [e.text for e in by_class(root, "tick-label")] == ["tick 1", "tick 2"]
    assert [e.text for e in by_class(root, "tick-label future")] == ["tick 3", "tick 4"]
    assert float(root.get("height")) == TOP + 3 * ROW + BOTTOM


def test_nodes_are_ordered_by_value():
    assert node_order([10, 2, "b", "a", 2]) == ("2", "10", "a", "b")


def test_usage_and_missing_store_errors(tmp_path, capsys):
    assert main(["diagram", str(tmp_path), "--out", "run.png"]) == 2
    assert exit_code(["diagram", str(tmp_path), "--out", "run.svg", "--from", "x"]) == 2
    assert exit_code(["diagram", str(tmp_path), "--out", "run.svg", "--format", "pdf"]) == 2
    assert exit_code(["diagram", str(tmp_path), "--out", str(tmp_path / "no" / "run.svg")]) == 2
    assert main(["diagram", str(tmp_path / "nowhere"), "--out", str(tmp_path / "run.svg")]) == 1
    errors = capsys.readouterr().err.splitlines()
    assert errors == [
        "sparkdedalus: error: --out: cannot tell the format of 'run.png'; add --format html or --format svg",
        "sparkdedalus diagram: error: argument --from: expected an integer, got 'x' (see --help)",
        "sparkdedalus diagram: error: argument --format: invalid choice: 'pdf' (choose from 'html', 'svg') "
        "(see --help)",
        f"sparkdedalus diagram: error: argument --out: cannot write '{tmp_path / 'no' / 'run.svg'}': "
        f"no directory '{tmp_path / 'no'}' (see --help)",
        f"sparkdedalus: error: {tmp_path / 'nowhere'} is not a sparkdedalus run directory (no manifest.json)"]
    assert not (tmp_path / "run.svg").exists()


# -- stored runs of examples/broadcast.ded -------------------------------------------------------

@pytest.fixture(scope="module")
def stores(spark, tmp_path_factory):
    """Run directories of broadcast.ded, 5 ticks: default network and LOSSY."""
    from sparkdedalus import Engine, Program
    from sparkdedalus.network import Network
    program = Program.from_files(os.path.join(EXAMPLES, "broadcast.ded"))
    out = {}
    for name, spec in (("default", ""), ("lossy", LOSSY)):
        out[name] = str(tmp_path_factory.mktemp("diagram") / name)
        Engine(spark).run(program, ticks=5, network=Network.parse(spec), store=out[name])
    return out


def command(*args) -> tuple[int, str, bool]:
    """`sparkdedalus diagram` in a fresh interpreter: exit code, output, whether pyspark got imported."""
    script = ("import sys; from sparkdedalus.shell.cli import main; code = main(['diagram', *sys.argv[1:]]); "
              "print('#', code, 'pyspark' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120)
    body, _, last = done.stdout.rpartition("# ")
    code, imported = last.split()
    return int(code), body + done.stderr, imported == "True"


@pytest.mark.spark
def test_broadcast_diagram_has_an_arrow_per_delivered_message(stores):
    from sparkdedalus.store import read
    root = parse(svg_text(from_store(stores["default"], relation="log")))
    assert [e.text for e in by_class(root, "node-name")] == ["a", "b", "c", "d"]
    assert arrows(root) == BROADCAST_ARROWS and len(by_class(root, "message delivered")) == 8
    assert len(read.messages(stores["default"])) == 8
    assert read.locations(stores["default"]) == {"a", "b", "c", "d"}
    assert by_class(root, "message lost") == [] and by_class(root, "crash") == []
    dots = {(e.get("data-node"), e.get("data-tick")): e for e in by_class(root, "facts")}
    assert title(dots["d", "4"]) == 'log at d, tick 4 (2 facts):\n  "bye"\n  "hi"'  # log("d","yo") never holds
    assert ("d", "1") not in dots and dots["a", "3"].find(NS + "text").text == "+bye +yo"


@pytest.mark.spark
def test_lossy_broadcast_diagram_marks_lost_messages_and_the_crash(stores):
    from sparkdedalus.store import read
    messages = read.messages(stores["lossy"])
    root = parse(svg_text(from_store(stores["lossy"])))
    assert len(by_class(root, "message delivered")) == sum(m.arrival is not None for m in messages) == 5
    assert len(by_class(root, "message lost")) == sum(m.arrival is None for m in messages) == 3
    assert arrows(root) == BROADCAST_ARROWS - {("a", "c", 1, 2, "hi"), ("b", "a", 2, 3, "yo"), ("b", "c", 2, 3, "yo")}
    assert lost(root) == LOSSY_LOST
    assert [(e.get("data-node"), e.get("data-tick")) for e in by_class(root, "crash")] == [("b", "2")]
    assert by_class(root, "facts") == []  # no --relation


@pytest.mark.spark
def test_diagram_command_reads_without_pyspark(stores, tmp_path):
    out = tmp_path / "run.svg"
    code, output, imported = command(stores["lossy"], "--out", str(out), "--relation", "log", "--from", "2")
    assert code == 0, output
    assert not imported, "the diagram command imported pyspark"
    assert output == f"wrote {out}: 4 nodes, ticks 2..5, 3 delivered, 2 lost, 1 crashed\n"  # sent at 2 and 3
    root = parse(out.read_text())
    assert lost(root) == LOSSY_LOST - {("a", "c", 1, "hi")}
    assert {e.get("data-tick") for e in by_class(root, "facts")} == {"2", "3", "4", "5"}


@pytest.mark.spark
def test_diagram_command_data_errors(stores, tmp_path):
    out = str(tmp_path / "run.html")
    code, output, _ = command(stores["default"], "--out", out, "--relation", "nope")
    assert code == 1 and output == ("sparkdedalus: error: unknown relation 'nope' "
                                    "(relations: bcast, log, node)\n")
    code, output, _ = command(stores["default"], "--out", out, "--to", "9")
    assert code == 1 and output == ("sparkdedalus: error: ticks 1..9 are not a range of committed ticks "
                                    "(ticks 1..5)\n")
    assert not os.path.exists(out)


# -- what a person sees ---------------------------------------------------------------------------

def near(pixel: tuple, colour: str, tolerance: int = 40) -> bool:
    return all(abs(p - int(colour[i:i + 2], 16)) <= tolerance for p, i in zip(pixel, (1, 3, 5)))


@pytest.mark.spark
def test_chromium_renders_the_lossy_broadcast_diagram(stores, tmp_path):
    chromium = shutil.which("chromium")
    if chromium is None:
        if os.environ.get("CI") != "true":
            pytest.skip("chromium is not installed (bash scripts/test.sh installs it)")
        pytest.fail("chromium is not installed: scripts/test.sh should have installed it")
    from PIL import Image
    page, png = tmp_path / "run.html", tmp_path / "run.png"
    assert main(["diagram", stores["lossy"], "--out", str(page), "--relation", "log"]) == 0
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={png}", "--window-size=1200,900",
                    page.as_uri()], capture_output=True, timeout=120, check=True)
    image = Image.open(png).convert("RGB")
    assert image.size == (1200, 900)
    colours = {colour: count for count, colour in image.getcolors(1200 * 900)}
    assert sum(colours.values()) - colours.get((255, 255, 255), 0) > 5000
    assert len(colours) > 10
    assert sum(n for c, n in colours.items() if near(c, "#1f77b4")) > 300  # the 5 arrows of log
    assert sum(n for c, n in colours.items() if near(c, "#d62728")) > 100  # the 3 lost marks and b's crash
