"""`sparkdedalus run` with the Spark engine: create the session, run with a
progress bar, print one tick, write statistics.

This shell (not the engine) may count Spark jobs through the classic
session's status tracker; on Spark Connect the job counts are left out. A run
that runs out of memory ends with one line naming the setting to raise
(`memory_failure`).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import threading
import time
from importlib import import_module

from sparkdedalus.errors import UserError
from sparkdedalus.output import render
from sparkdedalus.plumbing.lazy import started as session_started
from sparkdedalus.shell.stats import collected, gc_stats, say_collected, shown_collected, write_stats


def spark_session(args):
    """The session of --master or --remote, with the --conf settings (and the UI with --ui);
    with Delta Lake's jars and extension only when `args.delta` says the run needs them
    (a store, or a Delta `.input`: `needs_delta`). Delta costs a session about two seconds
    of start-up."""
    from sparkdedalus.plumbing.session import JIT, local_session, remote_session
    conf = {**({"spark.ui.enabled": "true"} if args.ui else {}),
            **({JIT: "quick"} if getattr(args, "quick_jit", False) else {}), **args.conf_settings}
    delta = getattr(args, "delta", False)
    with _jvm_stdout(verbose=args.verbose):
        if args.remote:
            return remote_session(args.remote, extra_conf=conf, delta=delta)
        spark = local_session(master=args.master, extra_conf=conf, delta=delta)
    if args.verbose:
        spark.sparkContext.setLogLevel("INFO")
    if args.ui:
        print(f"Spark UI: {spark.sparkContext.uiWebUrl or 'off (spark.ui.enabled is false)'}", file=sys.stderr)
    return spark


class _DefaultMaster(str):
    """The master of a run given no --master, told apart from one given (`lazy_session`)."""


#: `run --master`'s default
DEFAULT_MASTER = _DefaultMaster("local[2]")


def starts_lazily(args) -> bool:
    """Whether the run's session starts when a tick goes to Spark (plumbing/lazy.py)
    rather than now: not with --remote, --ui or a --master given (nor under spark-submit)."""
    return not (args.remote or args.ui or args.master is not DEFAULT_MASTER)


def lazy_session(args):
    """The session of `spark_session(args)`, started when a tick goes to Spark or
    anything else needs it (plumbing/lazy.py): a run whose ticks all run in the
    driver starts no JVM."""
    from sparkdedalus.plumbing.lazy import LazySession
    from sparkdedalus.plumbing.session import spark_defaults
    return LazySession(lambda: spark_session(args), {**spark_defaults(), **args.conf_settings})


def command_session(args, new_session=None):
    """The session of a command that runs the engine: `new_session(args)` when
    given (tests), else given no --master (nor --remote, --ui) one that starts
    when the engine first needs Spark (`lazy_session`), else `spark_session(args)`
    started now, the engine's modules imported while its JVM starts (`preload`)."""
    if new_session is None and starts_lazily(args):
        return lazy_session(args)
    preload()
    return (new_session or spark_session)(args)


#: modules a Spark run imports once its session is up (pandas and pyarrow by pyspark's
#: SparkContext itself, and by the engine), none of which imports a pyspark module the
#: session's own start has not imported already
PRELOADED = ("pandas", "pyarrow", "pyarrow.compute", "rich.progress", "sparkdedalus.spark.engine",
             "sparkdedalus.shell.progress", "sparkdedalus.plumbing.jobnames")


def preload() -> threading.Thread:
    """Import `PRELOADED` in a thread of its own while the session starts: the
    session's JVM takes seconds to start, in which this process only waits for
    it, and these imports take about half a second. A module that fails to
    import is left alone here: the run's own import of it raises as before."""
    def load():
        for name in PRELOADED:
            try:
                import_module(name)
            except Exception:  # noqa: BLE001 (raised again where the run imports it)
                pass
    thread = threading.Thread(target=load, name="sparkdedalus-preload", daemon=True)
    thread.start()
    return thread


#: the most ticks of a run whose driver JVM compiles with the client compiler only (`quick_jit`)
QUICK_JIT_TICKS = 50


def quick_jit(program, tick_count: int) -> bool:
    """Whether a run is small enough for a driver JVM with the client compiler
    only (`spark.sparkdedalus.jit=quick`, plumbing/session.py): at most
    `QUICK_JIT_TICKS` ticks over the facts the program's text holds (no
    `.input`). Such a run spends most of its time in Spark code the JVM has not
    compiled yet, which the client compiler compiles sooner and at less cost;
    a long or data-heavy run keeps both compilers (docs/performance.md).
    `--conf spark.sparkdedalus.jit=full` (or `quick`) overrides it.

    >>> from sparkdedalus import Program
    >>> quick_jit(Program.parse('p(1);'), 5), quick_jit(Program.parse('p(1);'), 500)
    (True, False)
    """
    return tick_count <= QUICK_JIT_TICKS and not program.inputs


def needs_delta(program, store: str | None, inputs_dir: str | None) -> bool:
    """Whether a run needs Delta Lake in its session: it commits to a store, or
    reads a Delta table with `.input` (without Delta in the session such an input
    is read with delta-rs on the driver instead).

    >>> from sparkdedalus import Program
    >>> needs_delta(Program.parse('p(1);'), None, None), needs_delta(Program.parse('p(1);'), "runs/x", None)
    (False, True)
    """
    from sparkdedalus.inputs import locate
    return bool(store) or any(locate(decl, inputs_dir)[1] == "delta" for decl in program.inputs)


JVM_LOG = os.path.join(tempfile.gettempdir(), "sparkdedalus-jvm.log")


@contextlib.contextmanager
def _jvm_stdout(verbose: bool):
    """A JVM started in here inherits standard output and error. Its output
    (Ivy's resolution report, start-up warnings) goes to standard error with
    --verbose and to JVM_LOG otherwise, never to standard output, where the
    facts are printed."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    target = os.dup(2) if verbose else os.open(JVM_LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(target, 1)
    if not verbose:
        os.dup2(target, 2)
    try:
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, target):
            os.close(fd)


class _JobCounter:
    """Spark jobs run so far, where the session can tell (classic only): the
    run's jobs form a job group; `close` gives the thread its own group back
    (a notebook or test session outlives the command)."""

    #: the thread's local properties that setJobGroup sets
    GROUP = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")

    def __init__(self, spark):
        self.spark = spark
        self.tracker = self.context = None
        self._bound = False
        self._bind()

    def _bind(self) -> None:
        """Join the group once the session is up (a LazySession may start mid-run, or never)."""
        if self._bound or not session_started(self.spark):
            return
        self._bound = True
        try:
            self.context = self.spark.sparkContext
            self.saved = {key: self.context.getLocalProperty(key) for key in self.GROUP}
            self.tracker = self.context.statusTracker()
            self.context.setJobGroup("sparkdedalus", "sparkdedalus run")
        except Exception:  # Spark Connect has no SparkContext
            self.tracker = self.context = None

    def count(self) -> int | None:
        """The jobs of the run so far; 0 while the session has not started; None where Spark cannot tell."""
        self._bind()
        if not self._bound:
            return 0
        if self.tracker is None:
            return None
        return len(self.tracker.getJobIdsForGroup("sparkdedalus"))

    def close(self) -> None:
        if self.context is not None:
            for key, value in self.saved.items():
                self.context.setLocalProperty(key, value)


def run_spark(program, args, new_session=None) -> int:
    """Run with the Spark engine in the session `new_session(args)` returns
    (default: a local or Spark Connect one, from --master, --remote and --conf)."""
    started = time.perf_counter()
    if args.store:
        check_store(args.store, args.resume)
    args.delta = needs_delta(program, args.store, args.inputs)
    # a driver JVM this process starts (not a Spark Connect server's, nor spark-submit's)
    local = args.master is not None and (not args.remote or args.remote.startswith("local"))
    args.quick_jit = local and quick_jit(program, args.tick_count)
    spark = command_session(args, new_session)
    memory = _driver_memory(spark) if session_started(spark) else None  # read while its JVM is up
    try:
        return _run_and_print(spark, program, args, started)
    except Exception as exc:
        failure = memory_failure(exc)
        if failure is None:
            raise
        memory = memory or _driver_memory(spark)  # a session started during the run
        raise UserError(f"Spark ran out of memory ({failure}); {_memory_advice(args, memory)}") from exc


def _run_and_print(spark, program, args, started: float) -> int:
    jobs = _JobCounter(spark)
    try:
        return _run_counted(spark, program, args, started, jobs)
    finally:
        jobs.close()


def _run_counted(spark, program, args, started: float, jobs: _JobCounter) -> int:
    """Run, print the facts and write --stats, counting the run's jobs per tick."""
    from sparkdedalus.spark.engine import Engine
    from sparkdedalus.plumbing.jobnames import JobNames
    from sparkdedalus.shell.progress import TickProgress

    per_tick_jobs: list = []
    last = [jobs.count() or 0]

    with TickProgress(args.tick_count, enabled=not args.quiet) as bar:
        def progress(tick, stats):
            now = jobs.count()
            if now is not None:
                per_tick_jobs.append(now - last[0])
                last[0] = now
            bar.advance(tick, stats.seconds, stats.facts, stats.placement)

        args.gc_rules = collected(program, args)
        run = _run(Engine(spark), program, args, progress)
    tick = args.at_tick or args.tick_count
    names = args.relation_list or list(program.outputs)
    with JobNames(spark).scope("result", tick):
        facts = run.facts(tick, relations=names)
    hidden = shown_collected(args.gc_rules, names)
    text = render(args.format, tick, facts, program, hidden, [s.placement for s in run.stats])
    if args.provenance:
        from sparkdedalus.shell.provenance import spark_derivations, with_provenance
        with JobNames(spark).scope("provenance", tick):
            text = with_provenance(args.format, text, program, spark_derivations(run, tick, facts))
    print(text)
    say_collected(hidden)
    if args.stats:
        _write_stats(args.stats, run, facts, per_tick_jobs, time.perf_counter() - started, args.gc_rules)
    return 0


def check_store(path: str, resume: bool = False) -> None:
    """Refuse a locked or already used run directory before starting Spark."""
    from sparkdedalus.store import manifest
    from sparkdedalus.store.lock import probe
    probe(path)
    found = manifest.load(path) if os.path.isdir(path) else None
    if found is not None and not resume:
        raise UserError(f"run directory {path} already holds a run (committed through tick "
                        f"{found.last_tick}); add --resume to continue it, or choose another directory")


def _run(engine, program, args, progress):
    """Engine.run with the command's options, and a line on the store written."""
    run = engine.run(program, ticks=args.tick_count, network=args.network_model, progress=progress,
                     inputs_dir=args.inputs, store=args.store, resume=args.resume,
                     store_writer=args.store_writer, commit_every=args.commit_period, gc=args.gc_rules,
                     provenance=args.provenance)
    if run.store is not None:
        store = run.store
        resumed = f", resumed after tick {store.resumed_from}" if store.resumed_from else ""
        print(f"stored ticks 1..{store.last_tick} in {store.path} ({len(store.manifest.relations)} Delta tables, "
              f"writer {store.writer}{resumed})", file=sys.stderr)
    return run


#: what the text of an exception (or of its causes) says when Spark ran out of memory
MEMORY_FAILURES = (
    re.compile(r"java\.lang\.OutOfMemoryError(: [^\n]*)?"),
    re.compile(r"SparkOutOfMemoryError(: [^\n]*)?"),
    re.compile(r"GC overhead limit exceeded"),
    re.compile(r"Not enough space to cache[^\n]*"),
    # a local checkpoint dropped because the block manager had no room for it
    re.compile(r"Checkpoint block \S+ not found"),
)


def memory_failure(exc: BaseException, jvm_log: str = JVM_LOG) -> str | None:
    """What said that Spark ran out of memory, if it did: a memory error in the
    text of the exception or of its causes, or, when the JVM died (in local mode
    a task's OutOfMemoryError halts it), one in the JVM's log; else None.

    >>> memory_failure(RuntimeError("calling o51.count: java.lang.OutOfMemoryError: Java heap space"))
    'java.lang.OutOfMemoryError: Java heap space'
    >>> memory_failure(RuntimeError("division by zero")) is None
    True
    """
    chain = []
    while exc is not None and len(chain) < 10:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    texts = [str(e) for e in chain]
    if any(_jvm_gone(e) for e in chain):
        try:
            with open(jvm_log, encoding="utf-8", errors="replace") as handle:
                texts.append(handle.read()[-200_000:])
        except OSError:
            pass
    for text in texts:
        for pattern in MEMORY_FAILURES:
            found = pattern.search(text)
            if found:
                return found.group(0).strip()
    return None


def _jvm_gone(exc: BaseException) -> bool:
    """py4j lost the JVM (or a Spark Connect server stopped answering)."""
    return type(exc).__name__ in ("Py4JNetworkError", "ConnectionRefusedError", "ConnectionResetError") \
        or "Answer from Java side is empty" in str(exc)


def _driver_memory(spark) -> str | None:
    try:
        return spark.conf.get("spark.driver.memory", None)
    except Exception:  # noqa: BLE001 (a Spark Connect server may not say)
        return None


def _memory_advice(args, memory: str | None) -> str:
    now = f" (now {memory})" if memory else ""
    if args.master is None and args.remote is None:  # a spark-submit job: its JVM is spark-submit's
        return f"raise the driver's memory{now}: spark-submit --driver-memory, e.g. --driver-memory 8g"
    if args.remote and not args.remote.startswith("local"):
        return f"raise the Spark Connect server's memory (spark.driver.memory of the server{now})"
    return f"raise spark.driver.memory{now}, e.g. --conf spark.driver.memory=8g"


def _write_stats(path: str, run, facts: dict, per_tick_jobs: list, seconds: float, gc: list) -> None:
    stats = {
        "total_seconds": round(seconds, 3),
        "tick_seconds": [round(s.seconds, 4) for s in run.stats],
        "jobs_per_tick": per_tick_jobs or None,
        "iterations_per_tick": [s.iterations for s in run.stats],
        "incremental_rules_per_tick": [s.incremental for s in run.stats],
        "facts_per_tick": [s.facts for s in run.stats],
        "placement_per_tick": [s.placement for s in run.stats],
        **gc_stats(gc, [s.persisted for s in run.stats], [s.collected for s in run.stats]),
        "facts": {name: len(rows) for name, rows in sorted(facts.items())},
    }
    write_stats(path, stats)
