#!/usr/bin/env python
"""Soufflé-sized cases on Spark (issue 50): LUBM's ontology and 14 queries over a
generated university, and the points-to analysis at 10x benchmarks/engine.py's size.

    .venv/bin/python benchmarks/lubm.py                         # LUBM, 15 departments (~100,000 triples)
    .venv/bin/python benchmarks/lubm.py --quick                 # 1 department (a smoke test)
    .venv/bin/python benchmarks/lubm.py --size 30               # 30 departments (2 universities)
    .venv/bin/python benchmarks/lubm.py --workload points_to    # Andersen, 20,000 methods
    .venv/bin/python benchmarks/lubm.py --workload points_to --methods 2000

"lubm": benchmarks/programs/lubm_bench.ded (univ-bench's class and property hierarchy,
inverses, transitivity, domains and ranges and defined classes as OWL-RL-style rules,
and LUBM's 14 queries as q1..q14) over a seeded LUBM-like university (`university`:
departments of faculty, students, courses, research groups, publications and degrees,
15 departments a university, as LUBM's generator makes them), its triples read with
`.input` from Parquet files. The engine runs it for 1 tick; `duckdb_answers` computes
the 14 answers with hand-written DuckDB SQL (a recursive CTE for subOrganizationOf, the
classes each query needs spelled out), and the two must be equal sets.

"points_to": benchmarks/programs/andersen_bench.ded over `points_to_facts(methods)`
(benchmarks/recursion_workloads.py) with engine.py's own functions, its count and
order-free digest of pts and hpts against DuckDB's semi-naive loop.

Prints JSON lines: "load" at the start and end, "config", then "lubm" or "points_to":
wall seconds of the engine's run and of reading its answers back ("engine_seconds"; LUBM:
`Engine.run` alone "run_seconds", and its tick, with the tick's placement and
iterations), the inputs' sizes, the answers' sizes and whether they match.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
import recursion_workloads as rw  # noqa: E402 - after the path
from engine import (PROGRAMS, duck_digest, emit, git_state, load, log, pt_engine, pt_program,  # noqa: E402
                    spark_settings, start_session)

QUERIES = [f"q{i}" for i in range(1, 15)]
DEPARTMENTS_A_UNIVERSITY = 15
LUBM_WORKLOAD = ("a seeded LUBM-like university: per department 7-10 full, 10-14 associate and 8-11 "
                 "assistant professors and 5-7 lecturers, 8-14 undergraduates and 3-4 graduate students "
                 "a faculty member, 10-20 research groups, courses, publications and degrees; "
                 "15 departments a university")

PUBLICATIONS = ["Publication", "ConferencePaper", "JournalArticle", "TechnicalReport", "Book"]
FACULTY = [("FullProfessor", (7, 10), (15, 20)), ("AssociateProfessor", (10, 14), (10, 18)),
           ("AssistantProfessor", (8, 11), (5, 10)), ("Lecturer", (5, 7), (0, 5))]


def university(departments: int, seed: int = 0, scale: float = 1.0) -> tuple[list, list]:
    """(types, triples): rows (s, c) of `s rdf:type c` and (s, p, o) of every other
    triple, of `departments` departments (Department0..14 of University0, then of
    University1, ...). Degrees are drawn from 20 universities or more (those without
    departments are typed by the range of degreeFrom only). `scale` multiplies every
    count (people, groups, papers; a test's tiny university). Deterministic in `seed`.

    >>> types, triples = university(1, seed=1)
    >>> ("http://www.Department0.University0.edu", "Department") in types
    True
    >>> sum(1 for _, p, _ in triples if p == "headOf")
    1
    """
    rng = random.Random(seed)

    def count(low: int, high: int) -> int:
        drawn = rng.randint(low, high)
        return max(min(drawn, 1), round(drawn * scale))

    universities = max(20, -(-departments // DEPARTMENTS_A_UNIVERSITY))
    types, triples = [], []
    for d in range(departments):
        u = d // DEPARTMENTS_A_UNIVERSITY
        uni = f"http://www.University{u}.edu"
        dept = f"http://www.Department{d % DEPARTMENTS_A_UNIVERSITY}.University{u}.edu"
        domain = dept[len("http://www."):]
        if d % DEPARTMENTS_A_UNIVERSITY == 0:
            types.append((uni, "University"))
        types.append((dept, "Department"))
        triples += [(dept, "subOrganizationOf", uni), (dept, "name", f"Department{d}")]

        def person(kind: str, i: int, where: str = dept):
            who = f"{dept}/{kind}{i}"
            types.append((who, kind))
            triples.extend([(who, "memberOf" if "Student" in kind else "worksFor", where),
                            (who, "name", f"{kind}{i}"), (who, "emailAddress", f"{kind}{i}@{domain}"),
                            (who, "telephone", f"{rng.randrange(100, 1000)}-{rng.randrange(1000, 10000)}")])
            return who

        def a_university():
            return f"http://www.University{rng.randrange(universities)}.edu"

        for g in range(count(10, 20)):
            group = f"{dept}/ResearchGroup{g}"
            types.append((group, "ResearchGroup"))
            triples.append((group, "subOrganizationOf", dept))
        faculty, professors, courses, graduate_courses, publications = [], [], [], [], []
        for kind, number, papers in FACULTY:
            for i in range(count(*number)):
                who = person(kind, i)
                faculty.append(who)
                if kind != "Lecturer":
                    professors.append(who)
                    triples.append((who, "researchInterest", f"Research{rng.randrange(30)}"))
                for degree in ("undergraduateDegreeFrom", "mastersDegreeFrom", "doctoralDegreeFrom"):
                    triples.append((who, degree, a_university()))
                for which, kind_of in ((courses, "Course"), (graduate_courses, "GraduateCourse")):
                    if kind_of == "GraduateCourse" and kind == "Lecturer":
                        continue
                    for _ in range(rng.randint(1, 2)):
                        course = f"{dept}/{kind_of}{len(which)}"
                        which.append(course)
                        types.append((course, kind_of))
                        triples += [(course, "name", f"{kind_of}{len(which) - 1}"), (who, "teacherOf", course)]
                for _ in range(count(*papers)):
                    paper = f"{who}/Publication{len(publications)}"
                    publications.append(paper)
                    types.append((paper, rng.choice(PUBLICATIONS)))
                    triples += [(paper, "name", f"Publication{len(publications) - 1}"),
                                (paper, "publicationAuthor", who)]
        head = faculty[0]  # FullProfessor0: headOf instead of worksFor
        triples[triples.index((head, "worksFor", dept))] = (head, "headOf", dept)
        for i in range(sum(count(8, 14) for _ in faculty)):
            who = person("UndergraduateStudent", i)
            for course in rng.sample(courses, min(len(courses), rng.randint(2, 4))):
                triples.append((who, "takesCourse", course))
            if rng.random() < 0.2:
                triples.append((who, "advisor", rng.choice(professors)))
        groups = [s for s, c in types if c == "ResearchGroup" and s.startswith(dept + "/")]
        for i in range(sum(count(3, 4) for _ in faculty)):
            who = person("GraduateStudent", i)
            for course in rng.sample(graduate_courses, min(len(graduate_courses), rng.randint(1, 3))):
                triples.append((who, "takesCourse", course))
            triples += [(who, "advisor", rng.choice(professors)), (who, "undergraduateDegreeFrom", a_university())]
            if rng.random() < 0.25:
                triples.append((who, "teachingAssistantOf", rng.choice(courses)))
            elif rng.random() < 0.33:
                triples.append((who, "worksFor", rng.choice(groups)))
            for paper in rng.sample(publications, min(len(publications), rng.randint(0, 5))):
                triples.append((paper, "publicationAuthor", who))
    return sorted(set(types)), sorted(set(triples))


def lubm_program(directory: Path, types: list, triples: list) -> Path:
    """lubm_bench.ded with `type` and `triple` read with `.input` from Parquet files
    written to `directory` (one location "u"); the program file's path."""
    import pyarrow.parquet as pq

    for name, rows in (("type", types), ("triple", triples)):
        pq.write_table(arrow(rows, ["s", "c"] if name == "type" else ["s", "p", "o"], location="u"),
                       directory / f"{name}.parquet")
    path = directory / "lubm.ded"
    path.write_text((PROGRAMS / "lubm_bench.ded").read_text()
                    + '.input type from "type.parquet"\n.input triple from "triple.parquet"\n')
    return path


def arrow(rows: list, columns: list, location: str | None = None):
    """rows as an Arrow table of string columns, with a first column `l` = `location` if given."""
    import pyarrow as pa

    table = {c: pa.array([r[i] for r in rows], pa.string()) for i, c in enumerate(columns)}
    if location is not None:
        table = {"l": pa.array([location] * len(rows), pa.string()), **table}
    return pa.table(table)


# ------------------------------------------------------------------ the check: DuckDB
U0, D0 = "http://www.University0.edu", "http://www.Department0.University0.edu"

#: every class a query asks for, as SQL over `type` (s, c) and `triple` (s, p, o): the
#: asserted subclasses and what the domains, ranges and defined classes add
CLASSES = f"""
degree AS (SELECT s, o FROM triple WHERE p IN ('degreeFrom', 'undergraduateDegreeFrom',
           'mastersDegreeFrom', 'doctoralDegreeFrom')),
works AS (SELECT s, o FROM triple WHERE p IN ('worksFor', 'headOf')),
member AS (SELECT s, o FROM triple WHERE p = 'memberOf' UNION SELECT s, o FROM works),
suborg(s, o) AS (SELECT s, o FROM triple WHERE p = 'subOrganizationOf'
                 UNION SELECT a.s, b.o FROM suborg a JOIN triple b ON b.s = a.o AND b.p = 'subOrganizationOf'),
course AS (SELECT s AS x FROM type WHERE c IN ('Course', 'GraduateCourse')
           UNION SELECT o FROM triple WHERE p IN ('teacherOf', 'teachingAssistantOf')),
dean AS (SELECT w.s AS x FROM works w JOIN triple h ON h.s = w.s AND h.o = w.o AND h.p = 'headOf'
         JOIN type t ON t.s = w.o AND t.c = 'College'),
person AS (SELECT s AS x FROM type WHERE c IN ('Person', 'Employee', 'AdministrativeStaff', 'ClericalStaff',
           'SystemsStaff', 'Faculty', 'Lecturer', 'PostDoc', 'Professor', 'AssistantProfessor',
           'AssociateProfessor', 'FullProfessor', 'VisitingProfessor', 'Chair', 'Dean', 'Director', 'Student',
           'UndergraduateStudent', 'GraduateStudent', 'ResearchAssistant', 'TeachingAssistant')
           UNION SELECT s FROM triple WHERE p IN ('advisor', 'emailAddress', 'telephone', 'teacherOf',
                 'teachingAssistantOf')
           UNION SELECT o FROM triple WHERE p IN ('advisor', 'publicationAuthor')
           UNION SELECT s FROM degree UNION SELECT s FROM member UNION SELECT x FROM dean),
chair AS (SELECT h.s AS x FROM triple h JOIN type t ON t.s = h.o AND t.c = 'Department'
          WHERE h.p = 'headOf' AND h.s IN (SELECT x FROM person)
          UNION SELECT s FROM type WHERE c = 'Chair'),
professor AS (SELECT s AS x FROM type WHERE c IN ('Professor', 'AssistantProfessor', 'AssociateProfessor',
              'FullProfessor', 'VisitingProfessor', 'Chair', 'Dean')
              UNION SELECT o FROM triple WHERE p = 'advisor' UNION SELECT x FROM chair UNION SELECT x FROM dean),
faculty AS (SELECT s AS x FROM type WHERE c IN ('Faculty', 'Lecturer', 'PostDoc')
            UNION SELECT x FROM professor UNION SELECT s FROM triple WHERE p = 'teacherOf'),
student AS (SELECT s AS x FROM type WHERE c IN ('Student', 'UndergraduateStudent', 'GraduateStudent')
            UNION SELECT t.s FROM triple t JOIN course c ON c.x = t.o
            WHERE t.p = 'takesCourse' AND t.s IN (SELECT x FROM person)),
university AS (SELECT s AS x FROM type WHERE c = 'University' UNION SELECT o FROM degree),
publication AS (SELECT s AS x FROM type WHERE c IN ('Publication', 'Article', 'ConferencePaper',
                'JournalArticle', 'TechnicalReport', 'Book', 'Manual', 'Software', 'Specification',
                'UnofficialPublication')
                UNION SELECT s FROM triple WHERE p = 'publicationAuthor'),
is_a(x, c) AS (SELECT s, c FROM type UNION SELECT x, 'Person' FROM person UNION SELECT x, 'Student' FROM student
               UNION SELECT x, 'Course' FROM course UNION SELECT x, 'Faculty' FROM faculty
               UNION SELECT x, 'Professor' FROM professor UNION SELECT x, 'Chair' FROM chair
               UNION SELECT x, 'University' FROM university UNION SELECT x, 'Publication' FROM publication)
"""

#: the 14 queries over CLASSES (`is_a`) and the properties with their subproperties
ANSWERS = {
    "q1": f"""SELECT t.s FROM triple t JOIN is_a g ON g.x = t.s AND g.c = 'GraduateStudent'
              WHERE t.p = 'takesCourse' AND t.o = '{D0}/GraduateCourse0'""",
    "q2": """SELECT m.s, u.x, m.o FROM member m
             JOIN is_a g ON g.x = m.s AND g.c = 'GraduateStudent' JOIN is_a d ON d.x = m.o AND d.c = 'Department'
             JOIN suborg so ON so.s = m.o JOIN is_a u ON u.x = so.o AND u.c = 'University'
             JOIN triple ug ON ug.s = m.s AND ug.p = 'undergraduateDegreeFrom' AND ug.o = so.o""",
    "q3": f"""SELECT t.s FROM triple t JOIN is_a p ON p.x = t.s AND p.c = 'Publication'
              WHERE t.p = 'publicationAuthor' AND t.o = '{D0}/AssistantProfessor0'""",
    "q4": f"""SELECT w.s, n.o, e.o, t.o FROM works w JOIN is_a p ON p.x = w.s AND p.c = 'Professor'
              JOIN triple n ON n.s = w.s AND n.p = 'name' JOIN triple e ON e.s = w.s AND e.p = 'emailAddress'
              JOIN triple t ON t.s = w.s AND t.p = 'telephone' WHERE w.o = '{D0}'""",
    "q5": f"SELECT m.s FROM member m JOIN is_a p ON p.x = m.s AND p.c = 'Person' WHERE m.o = '{D0}'",
    "q6": "SELECT x FROM is_a WHERE c = 'Student'",
    "q7": f"""SELECT t.s, t.o FROM triple t JOIN is_a s ON s.x = t.s AND s.c = 'Student'
              JOIN is_a c ON c.x = t.o AND c.c = 'Course'
              JOIN triple te ON te.o = t.o AND te.p = 'teacherOf' AND te.s = '{D0}/AssociateProfessor0'
              WHERE t.p = 'takesCourse'""",
    "q8": f"""SELECT m.s, m.o, e.o FROM member m JOIN is_a s ON s.x = m.s AND s.c = 'Student'
              JOIN is_a d ON d.x = m.o AND d.c = 'Department' JOIN suborg so ON so.s = m.o AND so.o = '{U0}'
              JOIN triple e ON e.s = m.s AND e.p = 'emailAddress'""",
    "q9": """SELECT a.s, a.o, t.o FROM triple a JOIN triple te ON te.s = a.o AND te.p = 'teacherOf'
             JOIN triple t ON t.s = a.s AND t.p = 'takesCourse' AND t.o = te.o
             JOIN is_a s ON s.x = a.s AND s.c = 'Student' JOIN is_a f ON f.x = a.o AND f.c = 'Faculty'
             JOIN is_a c ON c.x = t.o AND c.c = 'Course' WHERE a.p = 'advisor'""",
    "q10": f"""SELECT t.s FROM triple t JOIN is_a s ON s.x = t.s AND s.c = 'Student'
               WHERE t.p = 'takesCourse' AND t.o = '{D0}/GraduateCourse0'""",
    "q11": f"""SELECT so.s FROM suborg so JOIN is_a r ON r.x = so.s AND r.c = 'ResearchGroup'
               WHERE so.o = '{U0}'""",
    "q12": f"""SELECT w.s, w.o FROM works w JOIN is_a c ON c.x = w.s AND c.c = 'Chair'
               JOIN is_a d ON d.x = w.o AND d.c = 'Department' JOIN suborg so ON so.s = w.o AND so.o = '{U0}'""",
    "q13": f"SELECT d.s FROM degree d JOIN is_a p ON p.x = d.s AND p.c = 'Person' WHERE d.o = '{U0}'",
    "q14": "SELECT x FROM is_a WHERE c = 'UndergraduateStudent'",
}


def duckdb_answers(types: list, triples: list) -> dict:
    """{query: set of answer tuples} of the 14 queries, by DuckDB alone."""
    import duckdb

    con = duckdb.connect()
    con.register("type", arrow(types, ["s", "c"]))
    con.register("triple", arrow(triples, ["s", "p", "o"]))
    return {q: {tuple(row) for row in con.execute(f"WITH RECURSIVE {CLASSES} SELECT DISTINCT * FROM ({sql})").fetchall()}
            for q, sql in ANSWERS.items()}


def compare(found: dict, expected: dict) -> dict:
    """{query: True when `found`'s answer set is `expected`'s}.

    >>> compare({"q1": {("a",)}, "q2": set()}, {"q1": {("a",)}, "q2": {("b",)}})
    {'q1': True, 'q2': False}
    """
    return {q: set(found.get(q, ())) == set(rows) for q, rows in expected.items()}


def engine_answers(spark, path: Path) -> tuple[dict, object, float]:
    """({query: set of answer tuples}, the run, the seconds of `Engine.run` alone) of the
    program at `path` on Spark, 1 tick."""
    from sparkdedalus import Program
    from sparkdedalus.spark.engine import Engine

    started = time.perf_counter()
    run = Engine(spark).run(Program.from_files(str(path)), ticks=1, keep_history=False)
    seconds = time.perf_counter() - started
    return {q: {tuple(row)[1:] for row in run.relation(q, 1).collect()} for q in QUERIES}, run, seconds


def reference_answers(path: Path) -> dict:
    """{query: set of answer tuples} of the program at `path` by the reference evaluator."""
    from sparkdedalus import Program
    from sparkdedalus.reference.evaluator import run as reference_run

    trace = reference_run(Program.from_files(str(path)), 1)
    return {q: {tuple(row)[1:] for row in trace.relation(q, 1)} for q in QUERIES}


def tick_facts(run) -> dict:
    """What the run's one tick reports: seconds, placement, iterations, facts."""
    stats = run.stats[0]
    return {"tick_seconds": round(stats.seconds, 3), "placement": stats.placement,
            "iterations": stats.iterations, "tick_facts": stats.facts, "compiled": stats.compiled}


def lubm(spark, departments: int, seed: int) -> None:
    started = time.perf_counter()
    types, triples = university(departments, seed)
    generated = time.perf_counter() - started
    with tempfile.TemporaryDirectory(prefix="bench-lubm-") as tmp:
        path = lubm_program(Path(tmp), types, triples)
        started = time.perf_counter()
        expected = duckdb_answers(types, triples)
        duck_seconds = time.perf_counter() - started
        log(f"lubm {departments}: {len(types) + len(triples)} triples, duckdb {duck_seconds:.1f}s")
        started = time.perf_counter()
        found, run, run_seconds = engine_answers(spark, path)
        seconds = time.perf_counter() - started
    matches = compare(found, expected)
    log(f"lubm {departments}: engine {seconds:.1f}s, match {all(matches.values())}")
    emit("lubm", departments=departments, seed=seed, workload=LUBM_WORKLOAD,
         triples=len(types) + len(triples), type_triples=len(types), generate_seconds=round(generated, 3),
         engine_seconds=round(seconds, 3), run_seconds=round(run_seconds, 3), **tick_facts(run), duckdb_seconds=round(duck_seconds, 3),
         answers={q: len(expected[q]) for q in QUERIES}, engine_answers={q: len(found[q]) for q in QUERIES},
         matches=all(matches.values()), mismatched=[q for q, ok in matches.items() if not ok])


def points_to(spark, methods: int, seed: int) -> None:
    import duckdb

    facts = rw.points_to_facts(methods, seed)
    with tempfile.TemporaryDirectory(prefix="bench-pt-") as tmp:
        path = pt_program(Path(tmp), facts)
        con = duckdb.connect()
        started = time.perf_counter()
        rw.duckdb_points_to(con, facts, count_only=True)
        expected = {"pts": duck_digest(con, "t_pts", ["v", "o"]), "hpts": duck_digest(con, "t_hpts", ["o1", "f", "o2"])}
        duck_seconds = time.perf_counter() - started
        log(f"points_to {methods}: duckdb {duck_seconds:.1f}s {expected}")
        started = time.perf_counter()
        found = pt_engine(spark, path)
        seconds = time.perf_counter() - started
    matches = all(found[r] == expected[r] for r in expected)
    log(f"points_to {methods}: engine {seconds:.1f}s, match {matches}")
    emit("points_to", methods=methods, seed=seed, workload=rw.POINTS_TO_WORKLOAD,
         inputs={name: len(rows) for name, rows in facts.items()}, facts=sum(len(rows) for rows in facts.values()),
         engine_seconds=round(seconds, 3), duckdb_seconds=round(duck_seconds, 3),
         **{k: v for k, v in found.items() if k not in expected}, answers=expected,
         engine_answers={r: found[r] for r in expected}, matches=matches)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=["lubm", "points_to"], default="lubm")
    parser.add_argument("--size", type=int, default=None, help="LUBM: departments (default 15: ~100,000 triples)")
    parser.add_argument("--methods", type=int, default=None,
                        help="points_to: methods of 20 variables (default 20,000: 10x engine.py's largest)")
    parser.add_argument("--seed", type=int, default=None, help="default 0 (LUBM), 4 (points_to, as engine.py)")
    parser.add_argument("--quick", action="store_true", help="a small smoke run (1 department, 200 methods)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="extra Spark setting (repeatable)")
    args = parser.parse_args(argv)
    conf = spark_settings(parser, args.conf)
    load("start")
    spark = start_session(conf)
    emit("config", workload=args.workload, git=git_state(), master=spark.sparkContext.master,
         spark=spark.version, conf=conf)
    if args.workload == "lubm":
        lubm(spark, args.size or (1 if args.quick else 15), 0 if args.seed is None else args.seed)
    else:
        points_to(spark, args.methods or (200 if args.quick else 20_000), 4 if args.seed is None else args.seed)
    load("end")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
