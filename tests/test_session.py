"""Delta Lake through sparkdedalus.plumbing.session: Spark and delta-rs round trips, idempotent writes."""

import uuid

import pytest

from sparkdedalus.plumbing import session as session_mod
from sparkdedalus.plumbing.session import delta_maven_coordinates, session_has_delta


def test_delta_coordinates_match_delta_pip_utils():
    """Delta Lake's own rule: the package its configure_spark_with_delta_pip adds to a
    builder (no JVM starts; `_options` holds a builder's settings)."""
    from delta.pip_utils import configure_spark_with_delta_pip
    from pyspark.sql import SparkSession

    builder = configure_spark_with_delta_pip(SparkSession.Builder())
    assert delta_maven_coordinates() == builder._options["spark.jars.packages"]


def test_one_copy_of_the_configuration():
    """The repository's conf/ is the package's sparkdedalus/conf (no second copy to
    drift), and its Ivy settings never name the network."""
    from pathlib import Path
    conf = session_mod.conf_dir()
    repo_conf = Path(__file__).resolve().parents[1] / "conf"
    assert conf.name == "conf" and conf.parent.name == "sparkdedalus" and repo_conf.resolve() == conf.resolve()
    assert session_mod.spark_defaults()["spark.sql.shuffle.partitions"] == "2"
    assert (conf / "ivysettings.xml").read_text().count("<filesystem") == 1
    assert "<ibiblio" not in (conf / "ivysettings.xml").read_text()  # never the network


def test_a_conf_dir_in_the_environment_is_used_when_it_has_spark_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARKDEDALUS_CONF_DIR", str(tmp_path))
    assert session_mod.conf_dir() != tmp_path  # no spark-defaults.conf there: the package's
    (tmp_path / "spark-defaults.conf").write_text("spark.sql.shuffle.partitions 7\n")
    assert session_mod.conf_dir() == tmp_path and session_mod.spark_defaults() == {"spark.sql.shuffle.partitions": "7"}


@pytest.mark.spark
def test_session_has_delta(spark):
    assert session_has_delta(spark)
    assert spark.conf.get("spark.sql.shuffle.partitions") == session_mod.spark_defaults()["spark.sql.shuffle.partitions"]


@pytest.mark.spark
def test_delta_round_trip_spark_and_deltalake(spark, tmp_path):
    import deltalake

    path = str(tmp_path / "t")
    spark.createDataFrame([(1, "a"), (2, "b")], "id long, v string").write.format("delta").save(path)
    spark.createDataFrame([(3, "c")], "id long, v string").write.format("delta").mode("append").save(path)

    rows = spark.read.format("delta").load(path).orderBy("id").collect()
    assert [(r.id, r.v) for r in rows] == [(1, "a"), (2, "b"), (3, "c")]
    v0 = spark.read.format("delta").option("versionAsOf", 0).load(path).orderBy("id").collect()
    assert [(r.id, r.v) for r in v0] == [(1, "a"), (2, "b")]

    table = deltalake.DeltaTable(path)
    assert table.version() == 1
    got = table.to_pyarrow_table().sort_by("id").to_pydict()
    assert got == {"id": [1, 2, 3], "v": ["a", "b", "c"]}
    assert deltalake.DeltaTable(path, version=0).to_pyarrow_table().num_rows == 2


@pytest.mark.spark
def test_idempotent_txn_version_write_is_skipped(spark, tmp_path):
    path = str(tmp_path / "t")
    app_id = f"test-{uuid.uuid4().hex}"
    df = spark.createDataFrame([(1,)], "x long")

    def write(version):
        (df.write.format("delta").mode("append")
           .option("txnAppId", app_id).option("txnVersion", version).save(path))

    def count():
        return spark.read.format("delta").load(path).count()

    write(0)
    assert count() == 1
    write(0)  # same (txnAppId, txnVersion): skipped
    assert count() == 1
    write(1)  # newer version: applied
    assert count() == 2
    write(1)
    assert count() == 2
    history = spark.sql(f"DESCRIBE HISTORY delta.`{path}`").collect()
    assert sorted(r.version for r in history) == [0, 1]


_CONNECT_SCRIPT = r"""
import sys
from sparkdedalus.plumbing.session import remote_session, session_has_delta

path = sys.argv[1]
spark = remote_session()
try:
    assert type(spark).__module__.startswith("pyspark.sql.connect"), type(spark)
    assert session_has_delta(spark)
    df = spark.createDataFrame([(1, "a")], "id long, v string")
    for _ in range(2):
        df.write.format("delta").mode("append").option("txnAppId", "c").option("txnVersion", 0).save(path)
    rows = spark.read.format("delta").option("versionAsOf", 0).load(path).collect()
    assert [(r.id, r.v) for r in rows] == [(1, "a")], rows
    assert spark.read.format("delta").load(path).count() == 1
finally:
    spark.stop()
print("CONNECT-OK")
"""


@pytest.mark.spark
@pytest.mark.connect
def test_remote_session_has_delta(tmp_path):
    """Spark Connect (local server) with Delta. In a subprocess: a local Connect server cannot
    start in a process that already has a classic SparkContext (the `spark` fixture's)."""
    import subprocess
    import sys

    script = tmp_path / "connect_check.py"
    script.write_text(_CONNECT_SCRIPT)
    proc = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "t")],
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0 and "CONNECT-OK" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_resolved_jars_are_used_while_every_file_is_there(tmp_path, monkeypatch):
    """A recorded jar list puts the jars on the classpath directly; one file gone, and
    the session resolves them with Ivy again (the check says no)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert session_mod.resolved_delta_jars() is None
    assert "spark.jars.packages" in session_mod.delta_jar_conf()
    jars = [tmp_path / "delta-spark.jar", tmp_path / "delta-storage.jar"]
    for jar in jars:
        jar.write_bytes(b"")
    listed = session_mod.resolved_jars_file()
    listed.parent.mkdir(parents=True)
    listed.write_text("".join(f"{jar.as_uri()}\n" for jar in jars))
    assert session_mod.delta_jar_conf() == {"spark.jars": ",".join(jar.as_uri() for jar in jars)}
    jars[1].unlink()
    assert session_mod.resolved_delta_jars() is None
    assert session_mod.delta_jar_conf() == session_mod.delta_package_conf()


@pytest.mark.spark
def test_a_session_records_the_jars_ivy_resolved(spark, tmp_path, monkeypatch):
    """The shared test session's `spark.jars` (resolved by Ivy, or read from a list) is
    recorded: the Delta jar among files that exist."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    session_mod.record_resolved_jars(spark)
    jars = session_mod.resolved_delta_jars()
    artifact = delta_maven_coordinates().split(":")[1]
    assert jars and any(artifact in jar for jar in jars)
