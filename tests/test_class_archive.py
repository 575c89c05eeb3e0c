"""The driver JVM's class archive (plumbing/session.py, `class_archive_options`):
written by the first session's JVM, checked and used by the later ones, never
when a setting or the user's own Java options say otherwise. No Spark: the
options are computed for a cache directory of the test's own."""

from __future__ import annotations

import os
import time

import pytest

from sparkdedalus.plumbing import session


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The cache directory the archive goes to (XDG_CACHE_HOME/sparkdedalus)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    if session.class_archive_file() is None:
        pytest.skip("no java on this machine")
    return tmp_path / "sparkdedalus"


def test_the_first_session_writes_the_archive_when_its_jvm_exits(cache):
    archive = session.class_archive_file()
    options = session.class_archive_options({})
    assert options.split()[0] == f"-XX:ArchiveClassesAtExit={archive}.{os.getpid()}.tmp"
    assert "-Xlog:cds=off" in options.split()  # its warnings stay out of the JVM's output
    assert archive.parent == cache and cache.is_dir()


def test_a_complete_archive_is_promoted_and_used(cache, monkeypatch):
    archive = session.class_archive_file()
    cache.mkdir(parents=True)
    part = cache / f"{archive.name}.123.tmp"
    part.write_bytes(b"whole")
    monkeypatch.setattr(session, "_complete", lambda path: path == part)
    assert session.class_archive_options({}).split()[0] == f"-XX:SharedArchiveFile={archive}"
    assert archive.read_bytes() == b"whole" and not part.exists()
    # from then on it is used as it is
    monkeypatch.setattr(session, "_complete", lambda path: pytest.fail("checked again"))
    assert session.class_archive_options({}).split()[0] == f"-XX:SharedArchiveFile={archive}"


def test_one_archive_is_written_at_a_time_and_a_dead_writers_part_removed(cache):
    archive = session.class_archive_file()
    cache.mkdir(parents=True)
    part = cache / f"{archive.name}.123.tmp"
    part.write_bytes(bytes(64))  # a JVM writes the header (its magic) last
    assert session.class_archive_options({}) is None  # still being written
    old = time.time() - session._STALE_ARCHIVE_SECONDS - 10
    os.utime(part, (old, old))
    assert session.class_archive_options({}).startswith("-XX:ArchiveClassesAtExit=")
    assert not part.exists()


def test_a_file_without_the_archive_header_is_not_complete(tmp_path):
    zeros = tmp_path / "a.jsa"
    zeros.write_bytes(bytes(4096))
    assert not session._complete(zeros)
    assert not session._complete(tmp_path / "missing.jsa")


def test_the_setting_and_the_users_own_java_options_turn_it_off(cache):
    assert session.class_archive_options({session.CLASS_ARCHIVE: "false"}) is None
    for own in ("-Xshare:off", "-XX:SharedArchiveFile=/x.jsa", "-XX:ArchiveClassesAtExit=/y.jsa"):
        assert session.class_archive_options({"spark.driver.extraJavaOptions": f"-Dx=1 {own}"}) is None
    assert not cache.exists()


def test_local_sessions_get_it_between_the_log4j_option_and_the_users(cache, monkeypatch):
    monkeypatch.setattr(session, "machine_memory_bytes", lambda: 8 * 2**30)
    conf = session._session_conf("x", {"spark.driver.extraJavaOptions": "-Da=1"}, delta=False, start_options=True)
    options = conf["spark.driver.extraJavaOptions"].split()
    assert options[0].startswith("-Dlog4j2.configurationFile=") and options[-1] == "-Da=1"
    assert options[1].startswith("-XX:ArchiveClassesAtExit=")
    off = session._session_conf("x", {session.CLASS_ARCHIVE: "false"}, delta=False, start_options=True)
    assert "Archive" not in off["spark.driver.extraJavaOptions"]
    # without start_options (what the other tests of settings use), nothing is looked up
    assert "Archive" not in session._session_conf("x", None, delta=False)["spark.driver.extraJavaOptions"]


def test_the_jit_setting_chooses_the_compilers(cache):
    off = {session.CLASS_ARCHIVE: "false"}
    assert session.driver_start_options({**off, session.JIT: "quick"}) == ["-XX:TieredStopAtLevel=1"]
    assert session.driver_start_options({**off, session.JIT: "full"}) == []
    # the user's own choice of compilers wins
    assert session.driver_start_options({**off, session.JIT: "quick",
                                         "spark.driver.extraJavaOptions": "-XX:-TieredCompilation"}) == []
    with pytest.raises(session.UsageError, match="quick or full"):
        session.driver_start_options({**off, session.JIT: "fast"})
