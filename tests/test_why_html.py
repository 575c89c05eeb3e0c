"""`why --format html` (`sparkdedalus.diagram.why`): the derivation graph as a
self-contained page. The pages are parsed with html.parser; the expected facts,
rules and messages are the lineages derived by hand in docs/provenance.md (the
broadcast example) and from the small programs below, never copied from output."""

from __future__ import annotations

import json
import os
from html.parser import HTMLParser

import pytest

from frontend_helpers import exit_code
from reference_helpers import EXAMPLES, run_example, run_text
from sparkdedalus.diagram.why import html_text, summary
from sparkdedalus.network import Network
from sparkdedalus.reference.why import why

BROADCAST = os.path.join(EXAMPLES, "broadcast.ded")
VOID = {"meta", "br", "img", "link", "input", "hr"}


class Page(HTMLParser):
    """The elements of a page as (tag, attributes, text inside), refusing a page
    whose tags do not nest: every end tag closes the last open one."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.open, self.elements = [], []
        self.feed(text)
        self.close()
        assert self.open == [], f"unclosed: {[tag for tag, _ in self.open]}"

    def handle_starttag(self, tag, attrs):
        element = (tag, dict(attrs), [])
        self.elements.append(element)
        if tag not in VOID:
            self.open.append((tag, element))

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), []))

    def handle_endtag(self, tag):
        assert self.open and self.open[-1][0] == tag, f"</{tag}> closes {self.open[-1][0] if self.open else None}"
        self.open.pop()

    def handle_data(self, data):
        for _, (_, _, texts) in self.open:
            texts.append(data)

    def groups(self, cls: str) -> list:
        """(attributes, text inside) of every `<g class=cls>`."""
        return [(attrs, "".join(texts)) for tag, attrs, texts in self.elements
                if tag == "g" and attrs.get("class") == cls]


def page_of(answer) -> Page:
    return Page(html_text(answer.to_json(), answer.text()))


def fetches(page: Page) -> list:
    """The elements that would fetch something: scripts, links, images, frames, an
    http(s) src or href, a CSS url(http...) or @import."""
    return [(tag, attrs) for tag, attrs, texts in page.elements
            if tag in ("script", "link", "img", "iframe")
            or any((attrs.get(name) or "").startswith(("http:", "https:", "//")) for name in ("src", "href", "xlink:href"))
            or "url(http" in "".join(texts) or "@import" in "".join(texts)]


def test_the_page_is_well_formed_and_fetches_nothing():
    page = page_of(why(run_example("broadcast.ded", ticks=3, provenance=True), "log", ("c", "yo"), 3))
    assert {"html", "head", "body", "svg", "style"} <= {tag for tag, _, _ in page.elements}
    assert fetches(page) == []


def test_the_checks_say_no():
    with pytest.raises(AssertionError, match="closes"):
        Page("<html><body><p><b>x</p></body></html>")
    with pytest.raises(AssertionError, match="unclosed"):
        Page("<html><body><svg>")
    assert fetches(Page('<html><body><svg><image href="https://example.org/x.png"/></svg></body></html>'))
    assert fetches(Page("<html><head><style>@import 'x.css';</style></head></html>"))


def test_the_broadcast_lineage_of_docs_provenance():
    # docs/provenance.md, by hand: log("c","yo")@3 is the message "b" sends at tick 2
    # (rule line 27) from bcast("b","yo")@2 (program fact, line 37) and
    # node("b","c")@2, persisted (rule line 25) from node("b","c")@1 (line 34);
    # it arrives at "c" at tick 3. Four facts, two rule derivations, one message.
    page = page_of(why(run_example("broadcast.ded", ticks=3, provenance=True), "log", ("c", "yo"), 3))
    facts = {(a["data-relation"], tuple(json.loads(a["data-row"])), int(a["data-tick"]), a["data-location"])
             for a, _ in page.groups("fact")}
    assert facts == {("log", ("c", "yo"), 3, "c"), ("bcast", ("b", "yo"), 2, "b"),
                     ("node", ("b", "c"), 2, "b"), ("node", ("b", "c"), 1, "b")}
    # the boxes write the file without its directory; their hover text in full
    texts = {(a["data-relation"], a["data-tick"]): text for a, text in page.groups("fact")}
    assert "fact of the program (broadcast.ded:37)" in texts["bcast", "2"] and f"{BROADCAST}:37" in texts["bcast", "2"]
    assert "fact of the program (broadcast.ded:34)" in texts["node", "1"] and f"{BROADCAST}:34" in texts["node", "1"]
    labels = {a["data-pos"]: text for a, text in page.groups("derivation")}
    assert "broadcast.ded:27: b@2 \u2192 c@3" in labels[f"{BROADCAST}:27"]
    assert "@next broadcast.ded:25" in labels[f"{BROADCAST}:25"]
    derivations = {(a["data-fact"], a["data-kind"], a["data-pos"]) for a, _ in page.groups("derivation")}
    assert derivations == {('log("c", "yo")@3', "message", f"{BROADCAST}:27"),
                           ('node("b", "c")@2', "next", f"{BROADCAST}:25")}
    (message,) = [a for a, _ in page.groups("message delivered")]
    assert (message["data-src"], message["data-send"], message["data-dst"], message["data-arrival"]) == \
        ("b", "2", "c", "3")
    assert json.loads(message["data-row"]) == ["c", "yo"]
    (title,) = [t for tag, _, t in page.elements if tag == "title" and t and t[0].startswith("Why")]
    assert title == ['Why log("c", "yo")@3']


def test_alternatives_are_numbered_and_coloured_apart():
    # p(g,a,c) by the base rule (line 2) from e(g,a,c), and by the recursive rule
    # (line 3) from e(g,a,b) and p(g,b,c), itself by the base rule from e(g,b,c)
    trace = run_text('''e("g", "a", "b"); e("g", "b", "c"); e("g", "a", "c");
        p(G, X, Y) :- e(G, X, Y);
        p(G, X, Z) :- e(G, X, Y), p(G, Y, Z);''', ticks=1, provenance=True)
    page = page_of(why(trace, "p", ("g", "a", "c"), 1))
    mine = [a for a, _ in page.groups("derivation") if a["data-fact"] == 'p("g", "a", "c")@1']
    assert sorted((a["data-k"], a["data-of"], a["data-pos"]) for a in mine) == [
        ("1", "2", "<string>:2"), ("2", "2", "<string>:3")]
    strokes = [_strokes(page, a) for a in mine]
    assert strokes[0] and strokes[1] and not strokes[0] & strokes[1]
    labels = [text for a, text in page.groups("derivation") if a["data-fact"] == 'p("g", "a", "c")@1']
    assert any("1/2 <string>:2" in t for t in labels) and any("2/2 <string>:3" in t for t in labels)


def _strokes(page: Page, derivation: dict) -> set:
    """The edge colours inside the `<g class="derivation">` with these attributes
    (its edges come before any group inside it)."""
    inside, found = False, set()
    for tag, attrs, _ in page.elements:
        if tag == "g":
            inside = attrs == derivation
        elif inside and tag == "path" and attrs.get("class") == "edge":
            found.add(attrs["stroke"])
    return found


def test_a_negated_atom_shows_as_absent():
    # p("a", 1)@2 by the @next rule from q("a", 1)@1, with no r("a") at tick 1
    trace = run_text('q("a", 1)@1;\np(L, X)@next :- q(L, X), notin r(L);', ticks=2, provenance=True)
    page = page_of(why(trace, "p", ("a", 1), 2))
    ((attrs, text),) = page.groups("derivation")
    assert (attrs["data-kind"], attrs["data-pos"]) == ("next", "<string>:2")
    assert 'r("a") was absent at 1' in text


def test_a_fact_that_does_not_hold_shows_the_closest_rule_and_the_lost_message():
    # docs/provenance.md, by hand: with a>c@1 omitted, log("c","hi")@3 does not hold;
    # the closest rule is line 27 at tick 1, both body atoms matched (bcast("a","hi")@1,
    # node("a","c")@1), and "a"'s message to "c" sent at tick 1 was lost
    trace = run_example("broadcast.ded", ticks=3, network=Network.parse("omit=a>c@1"), provenance=True)
    answer = why(trace, "log", ("c", "hi"), 3)
    page = page_of(answer)
    (target,) = [a for a, _ in page.groups("fact not-holding")]
    assert (target["data-relation"], target["data-row"], target["data-tick"]) == ("log", '["c", "hi"]', "3")
    ((closest, text),) = page.groups("derivation closest")
    assert closest["data-pos"] == f"{BROADCAST}:27" and "at tick 1, 2 of 2 body atoms matched" in text
    matched = {(a["data-relation"], a["data-row"], a["data-tick"]) for a, _ in page.groups("fact")}
    assert matched == {("bcast", '["a", "hi"]', "1"), ("node", '["a", "c"]', "1")}
    (lost,) = [a for a, _ in page.groups("message lost")]
    assert (lost["data-src"], lost["data-dst"], lost["data-send"]) == ("a", "c", "1") and "data-arrival" not in lost
    assert summary(answer.to_json()).startswith('log("c", "hi")@3 does not hold: closest rule')


def test_a_fact_that_does_not_hold_lists_the_missing_atoms():
    # p(g,c,a): the base rule needs e(g,c,a)@1, which is no fact: 0 of 1 matched
    trace = run_text('''e("g", "a", "b");
        p(G, X, Y) :- e(G, X, Y);''', ticks=1, provenance=True)
    page = page_of(why(trace, "p", ("g", "c", "a"), 1))
    ((_, text),) = page.groups("derivation closest")
    assert 'missing: e("g", "c", "a")@1' in text and "0 of 1 body atoms matched" in text
    assert page.groups("fact") == []


def test_cli_writes_the_page_and_says_so(tmp_path, capsys):
    out = tmp_path / "why.html"
    assert exit_code(["why", BROADCAST, "--ticks", "3", 'log("c", "yo")@3', "--format", "html", "--out", str(out)]) == 0
    assert capsys.readouterr().out == f'wrote {out}: log("c", "yo")@3 holds: 4 facts, 2 derivations by rules (1 message)\n'
    assert len(Page(out.read_text(encoding="utf-8")).groups("fact")) == 4
    # a fact that does not hold: the page too, exit 1
    assert exit_code(["why", BROADCAST, "--ticks", "3", 'log("d", "yo")@3', "--format", "html", "--out", str(out)]) == 1
    assert Page(out.read_text(encoding="utf-8")).groups("fact not-holding")


@pytest.mark.parametrize("argv, message", [
    (["--format", "html"], "sparkdedalus: error: --format html writes a file: give --out FILE"),
    (["--out", "x.html"], "sparkdedalus: error: --out goes with --format html (text and json are printed)"),
])
def test_cli_html_needs_out_and_out_needs_html(capsys, argv, message):
    assert exit_code(["why", BROADCAST, "--ticks", "3", 'log("c", "yo")@3', *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.strip() == message
