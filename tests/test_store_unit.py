"""The store's JVM-free parts: manifest, program fingerprint, writer lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from sparkdedalus import Program
from sparkdedalus.store import StoreLockedError, layout, manifest as manifests
from sparkdedalus.store.lock import WriterLock

PROGRAM = """
    .persist log
    log(M, P)@async :- bcast(N, P), node(N, M);
    node(N, M)@next :- node(N, M);
    node(N, M)@next :- node(N, M), flag(N);
    bcast("a", "hi")@1;
"""


def test_relations_info_names_the_tables_columns():
    program = Program.parse(".decl log(at: string, what: string)\n" + textwrap.dedent(PROGRAM))
    info = manifests.relations_info(program)
    assert list(info) == list(program.relations)
    assert info["log"].columns == ("at", "what") and info["bcast"].columns == ("loc", "c1")
    assert info["bcast"].types == program.relations["bcast"].types
    assert layout.table_path("/runs/r", "log") == "/runs/r/log"
    assert layout.bookkeeping_clash(("loc", "_op")) == "_op" and layout.bookkeeping_clash(("loc",)) is None


def test_fingerprint_ignores_formatting_but_not_rules():
    a = Program.parse(textwrap.dedent(PROGRAM))
    b = Program.parse("// a comment\n" + textwrap.dedent(PROGRAM).replace(";", " ;"))
    c = Program.parse(textwrap.dedent(PROGRAM).replace('"hi"', '"ho"'))
    assert manifests.program_fingerprint(a) == manifests.program_fingerprint(b)
    assert manifests.program_fingerprint(a) != manifests.program_fingerprint(c)


def test_manifest_round_trip_is_atomic(tmp_path):
    program = Program.parse(textwrap.dedent(PROGRAM))
    m = manifests.Manifest("run-1", manifests.program_fingerprint(program), "delay=fixed,seed=0",
                           manifests.relations_info(program), 3, manifests.now())
    manifests.save(str(tmp_path), m)
    assert manifests.load(str(tmp_path)) == m
    assert sorted(os.listdir(tmp_path)) == ["manifest.json"]  # no temporary file left
    assert manifests.load(str(tmp_path / "nowhere")) is None
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(manifests.StoreError, match="cannot read the run manifest"):
        manifests.load(str(tmp_path))


def test_second_writer_is_refused_with_one_line(tmp_path):
    first = WriterLock(str(tmp_path))
    first.acquire()
    with pytest.raises(StoreLockedError) as info:
        WriterLock(str(tmp_path)).acquire()
    message = str(info.value)
    assert "\n" not in message and f"pid {os.getpid()}" in message and "another process" in message
    first.release()
    again = WriterLock(str(tmp_path))
    again.acquire()
    again.release()


def test_lock_of_a_killed_writer_is_stale(tmp_path):
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {os.getcwd()!r})
        from sparkdedalus.store.lock import WriterLock
        WriterLock({str(tmp_path)!r}).acquire()
        print("locked", flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(StoreLockedError, match=f"pid {proc.pid}"):
            WriterLock(str(tmp_path)).acquire()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        lock = WriterLock(str(tmp_path))
        lock.acquire()  # the dead writer's lock is stale
        assert json.loads((tmp_path / "LOCK").read_text())["pid"] == os.getpid()
        lock.release()
    finally:
        proc.kill()
        proc.wait()


def test_lock_without_flock_falls_back_to_pid_check(tmp_path, monkeypatch):
    import sparkdedalus.store.lock as lock_module
    monkeypatch.setattr(lock_module, "fcntl", None)
    (tmp_path / "LOCK").write_text(json.dumps({"pid": 2 ** 22 + 12345, "host": lock_module.socket.gethostname()}))
    lock = WriterLock(str(tmp_path))
    lock.acquire()  # a dead pid on this host: stale
    with pytest.raises(StoreLockedError):
        WriterLock(str(tmp_path)).acquire()
    lock.release()
    assert not (tmp_path / "LOCK").exists()
