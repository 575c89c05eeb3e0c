"""`sparkdedalus why --engine spark`: the Spark run's provenance, collected
(`spark.provenance.Collected`), answers as the reference evaluator's trace does;
the reference's answer is the oracle, and the lines checked by hand are
docs/provenance.md's."""

import json
import os

from reference_helpers import EXAMPLES
from sparkdedalus.shell import cli
from sparkdedalus.shell import why as command

BROADCAST = os.path.join(EXAMPLES, "broadcast.ded")


def answer(spark, capsys, engine: str, *options) -> tuple:
    args = cli._parser().parse_args(["why", BROADCAST, "--ticks", "3", *options, "--engine", engine])
    code = command.handle(args, new_session=lambda args: spark)
    return code, capsys.readouterr().out


def test_a_fact_that_holds_has_the_reference_derivations(spark, capsys):
    # log("a","yo")@3: by b's message sent at 2 (b broadcasts "yo" at 2), arriving at 3
    code, out = answer(spark, capsys, "spark", 'log("a", "yo")@3', "--format", "json")
    assert (code, out) == answer(spark, capsys, "reference", 'log("a", "yo")@3', "--format", "json")
    facts = json.loads(out)["facts"]
    (message,) = [d["message"] for d in facts[0]["derivations"] if d["kind"] == "message"]
    assert message == {"sender": "b", "send_tick": 2, "receiver": "a", "arrival": 3}


def test_a_fact_that_does_not_hold_has_the_closest_rule_and_the_lost_message(spark, capsys):
    # docs/provenance.md: with a>c@1 omitted, log("c","hi")@3 does not hold; a's message to c sent at 1 was lost
    code, out = answer(spark, capsys, "spark", 'log("c", "hi")@3', "--network", "omit=a>c@1")
    assert (code, out) == answer(spark, capsys, "reference", 'log("c", "hi")@3', "--network", "omit=a>c@1")
    assert code == 1 and '  message from "a" sent at tick 1: lost' in out.splitlines()
