"""SparkSession factories: local classic sessions with Delta Lake, and Spark Connect.

Usage::

    from sparkdedalus.plumbing.session import local_session, session_has_delta
    spark = local_session()                       # local[2], Delta on, quiet logs
    spark.range(3).write.format("delta").save("/tmp/t")
    assert session_has_delta(spark)

Settings come from the package's ``sparkdedalus/conf/`` (spark-defaults.conf, log4j2.properties,
ivysettings.xml; the repository's ``conf/`` links to it, a wheel carries it as package data), or
from the directory $SPARKDEDALUS_CONF_DIR names: one copy of each file.
The Delta jars are resolved by Spark's Ivy from the local Maven repository only (~/.m2, filled by
``scripts/setup.sh``), so no network is needed at run time; the jar files it resolved are listed
in a cache file, and later sessions put them on the classpath directly (`delta_jar_conf`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import uuid
import warnings
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Mapping

from pyspark.sql import SparkSession

from sparkdedalus.errors import UsageError

__all__ = [
    "CLASS_ARCHIVE",
    "JIT",
    "class_archive_file",
    "class_archive_options",
    "conf_dir",
    "default_driver_memory",
    "delta_maven_coordinates",
    "delta_jar_conf",
    "delta_package_conf",
    "driver_start_options",
    "local_session",
    "remote_session",
    "session_has_delta",
    "spark_defaults",
]

#: the package's configuration files (sparkdedalus/plumbing/session.py -> ../conf)
_PACKAGE_CONF_DIR = Path(__file__).resolve().parents[1] / "conf"

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"

# Keys that only make sense with the Delta jars on the classpath.
_DELTA_KEYS = ("spark.sql.extensions", "spark.sql.catalog.spark_catalog")

def conf_dir() -> Path:
    """The configuration directory: $SPARKDEDALUS_CONF_DIR when it has a
    spark-defaults.conf, else the package's own `sparkdedalus/conf` (the
    repository's `conf/` links to it; a wheel carries it as package data)."""
    env = os.environ.get("SPARKDEDALUS_CONF_DIR")
    if env and (Path(env) / "spark-defaults.conf").is_file():
        return Path(env)
    return _PACKAGE_CONF_DIR


def _parse_properties(text: str) -> dict[str, str]:
    """Parse spark-defaults.conf syntax: ``key value`` (or ``key=value``), '#' comments."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 1)
        if "=" in parts[0]:
            key, _, value = line.partition("=")
        else:
            key, value = parts[0], parts[1] if len(parts) > 1 else ""
        out[key.strip()] = value.strip()
    return out


def spark_defaults() -> dict[str, str]:
    """Settings of spark-defaults.conf in `conf_dir()`."""
    return _parse_properties((conf_dir() / "spark-defaults.conf").read_text())


@lru_cache(maxsize=1)
def delta_maven_coordinates() -> str:
    """Maven coordinates of the Delta jar matching the installed pyspark and delta-spark.

    Same rule as ``delta.pip_utils.configure_spark_with_delta_pip``:
    ``io.delta:delta-spark_<spark major.minor>_2.13:<delta-spark version>``,
    e.g. ``io.delta:delta-spark_4.1_2.13:4.2.0``.
    """
    import pyspark

    delta_version = metadata.version("delta_spark")
    spark_version = pyspark.__version__
    scala_version = "2.13"
    if spark_version:
        spark_major_minor = ".".join(spark_version.split(".")[:2])
        artifact = f"delta-spark_{spark_major_minor}_{scala_version}"
    else:
        artifact = f"delta-spark_{scala_version}"
    return f"io.delta:{artifact}:{delta_version}"


def delta_package_conf() -> dict[str, str]:
    """Spark settings that have Spark's Ivy resolve the Delta jars offline from ~/.m2."""
    return {
        "spark.jars.packages": delta_maven_coordinates(),
        "spark.jars.ivySettings": str(conf_dir() / "ivysettings.xml"),
    }


def resolved_jars_file() -> Path:
    """Where the jar files Spark resolved for `delta_maven_coordinates()` are
    listed ($XDG_CACHE_HOME or ~/.cache, then sparkdedalus/)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sparkdedalus"
    return cache / f"jars-{delta_maven_coordinates().replace(':', '_')}.txt"


def resolved_delta_jars() -> list[str] | None:
    """The jar files (file: URIs) an earlier session resolved for the Delta
    coordinates (`record_resolved_jars`), or None when none were recorded or
    one of them is gone."""
    try:
        jars = resolved_jars_file().read_text().split()
    except OSError:
        return None
    if not jars or not all(Path(uri.removeprefix("file://")).is_file() for uri in jars):
        return None
    return jars


def record_resolved_jars(spark: SparkSession) -> None:
    """List the jar files Spark's Ivy resolved for a session started with
    `delta_package_conf()` (`spark.jars`), so that later sessions put them on
    the classpath directly (`delta_jar_conf`): no Ivy resolution, no copies of
    the jars among the session's files. Nothing is recorded when the list
    does not hold the Delta jar, and a failure to write is ignored."""
    jars = spark.sparkContext.getConf().get("spark.jars", "").split(",")
    artifact = delta_maven_coordinates().split(":")[1]
    if not any(artifact in jar for jar in jars) or not all(jar.startswith("file:") for jar in jars):
        return
    path = resolved_jars_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text("\n".join(jars) + "\n")
        tmp.replace(path)
    except OSError:
        pass


def delta_jar_conf() -> dict[str, str]:
    """Spark settings that put the Delta jars on the classpath: the jar files
    an earlier session resolved (`resolved_delta_jars`) as `spark.jars`, else
    `delta_package_conf()` (Ivy, offline from ~/.m2: about a second more, and
    the jars copied among the session's files)."""
    jars = resolved_delta_jars()
    return {"spark.jars": ",".join(jars)} if jars else delta_package_conf()


#: the driver's share of the machine's memory in the sessions local_session() creates
DRIVER_MEMORY_SHARE = 4
#: bounds of that default, in MiB
DRIVER_MEMORY_MIN_MIB, DRIVER_MEMORY_MAX_MIB = 1024, 32768


def machine_memory_bytes() -> int | None:
    """Physical memory, or the cgroup (v2) limit of this process when lower; None if unknown."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
    except OSError:
        limit = "max"
    return min(physical, int(limit)) if limit.isdigit() else physical


def default_driver_memory(memory_bytes: int | None = None) -> str:
    """`spark.driver.memory` of local sessions: a quarter of the machine's memory
    (`machine_memory_bytes`), at least 1 GiB and at most 32 GiB, in MiB (Spark's
    own default is 1g whatever the machine). In local mode the driver's JVM also
    runs the tasks, so this is the whole engine's heap.

    >>> default_driver_memory(24 * 2**30), default_driver_memory(2 * 2**30), default_driver_memory(512 * 2**30)
    ('6144m', '1024m', '32768m')
    """
    memory = machine_memory_bytes() if memory_bytes is None else memory_bytes
    if not memory:
        return f"{DRIVER_MEMORY_MIN_MIB}m"
    mib = memory // DRIVER_MEMORY_SHARE // 2**20
    return f"{max(DRIVER_MEMORY_MIN_MIB, min(DRIVER_MEMORY_MAX_MIB, mib))}m"


def _session_conf(
    app_name: str, extra_conf: Mapping[str, object] | None, delta: bool, start_options: bool = False
) -> dict[str, str]:
    """The settings of a session `local_session` or a local `remote_session`
    creates; with `start_options`, the driver JVM's start options
    (`driver_start_options`) come between the log4j option and the user's own."""
    conf = spark_defaults()
    conf.setdefault("spark.driver.memory", default_driver_memory())
    if delta:
        conf.update(delta_jar_conf())
        conf.setdefault("spark.sql.extensions", DELTA_EXTENSION)
        conf.setdefault("spark.sql.catalog.spark_catalog", DELTA_CATALOG)
    else:
        for key in _DELTA_KEYS:
            conf.pop(key, None)
        conf = {k: v for k, v in conf.items() if not k.startswith("spark.databricks.delta.")}
    conf["spark.app.name"] = app_name

    log4j = conf_dir() / "log4j2.properties"
    java_opts = f"-Dlog4j2.configurationFile={log4j.as_uri()}"
    extra = {str(k): str(v) for k, v in (extra_conf or {}).items()}
    user_opts = extra.pop("spark.driver.extraJavaOptions", conf.get("spark.driver.extraJavaOptions"))
    conf.update(extra)
    if start_options:
        java_opts = " ".join([java_opts, *driver_start_options({**conf, "spark.driver.extraJavaOptions": user_opts or ""})])
    conf["spark.driver.extraJavaOptions"] = f"{java_opts} {user_opts}" if user_opts else java_opts
    return conf


#: the setting that turns the driver JVM's class archive off (`false`); on by default
CLASS_ARCHIVE = "spark.sparkdedalus.classArchive"
#: the setting that chooses the driver JVM's compilers: `quick` (the client compiler only) or `full`
JIT = "spark.sparkdedalus.jit"
JIT_QUICK, JIT_FULL = "quick", "full"
#: the first four bytes of a complete dynamic class archive (JDK 13+; the JVM writes its
#: header last, so a file still being written, or cut short, starts with zeros)
_ARCHIVE_MAGIC = bytes.fromhex("a8ab0bf0")
#: unified-logging options that keep the JVM's class-archive warnings (hundreds of classes it
#: skips while writing, an archive it cannot use) out of its output
_ARCHIVE_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
#: a part-written archive not complete this long (seconds) after it was last written is removed
_STALE_ARCHIVE_SECONDS = 300


def _java() -> str | None:
    """The java executable Spark's launcher starts: $JAVA_HOME/bin/java, else `java` on PATH."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    return os.path.realpath(found) if found and os.path.isfile(found) else None


def class_archive_file() -> Path | None:
    """Where the driver JVM's class archive of this pyspark and this Java is kept
    (the cache directory of `resolved_jars_file`), or None without a Java.
    The name holds a digest of what the archive depends on: the pyspark
    version and install (its jars are the classpath), the java executable and
    its mtime, and the directories Spark's launcher adds to the classpath."""
    import pyspark

    java = _java()
    if java is None:
        return None
    parts = [pyspark.__version__, str(Path(pyspark.__file__).parent), java, str(os.stat(java).st_mtime_ns)]
    parts += [os.environ.get(name, "") for name in ("SPARK_HOME", "SPARK_CONF_DIR", "HADOOP_CONF_DIR",
                                                    "YARN_CONF_DIR", "SPARK_DIST_CLASSPATH")]
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]
    return resolved_jars_file().parent / f"jvm-classes-{digest}.jsa"


def _complete(archive: Path) -> bool:
    """Whether `archive` is a whole class archive that this Java maps: its header
    is there (written last) and `java -version` starts with it (a file cut
    short would crash the JVM that maps it, so it is tried once, here)."""
    try:
        with open(archive, "rb") as handle:
            if handle.read(4) != _ARCHIVE_MAGIC:
                return False
    except OSError:
        return False
    java = _java()
    if java is None:
        return False
    try:
        done = subprocess.run([java, f"-XX:SharedArchiveFile={archive}", *_ARCHIVE_QUIET.split(), "-version"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _promote_written(archive: Path) -> bool:
    """Look at the part-written archives (`<archive>.<pid>.tmp`) earlier JVMs
    left: the first complete one becomes `archive`; one that is still not
    complete `_STALE_ARCHIVE_SECONDS` after it was last written is removed (its
    JVM died while writing). Whether some JVM may still be writing one (a JVM
    writes its archive after its Python process is gone, so the pid in the
    name, the Python's, says nothing)."""
    writing = False
    for part in sorted(archive.parent.glob(archive.name + ".*.tmp")):
        try:
            if not archive.exists() and _complete(part):
                part.replace(archive)
            elif time.time() - part.stat().st_mtime > _STALE_ARCHIVE_SECONDS:
                part.unlink()
            elif not archive.exists():
                writing = True
        except OSError:
            continue
    return writing


def class_archive_options(conf: Mapping[str, str]) -> str | None:
    """The driver JVM's options for its class archive (CDS: the classes Spark
    loads, parsed and verified once, mapped at start), or None when `conf` turns
    it off (`spark.sparkdedalus.classArchive=false`), its own Java options
    already choose an archive (`-Xshare`, `-XX:SharedArchiveFile`), or there is
    no Java or cache directory. The first session writes the archive when its
    JVM exits (`-XX:ArchiveClassesAtExit`, to `<archive>.<pid>.tmp`); a later
    session checks it (`_complete`) and uses it from then on (with the imports
    of shell/run_spark.preload, a paired wall ratio of 0.72 on a 5-tick CLI run,
    docs/performance.md). An archive the JVM
    cannot use (another Java, another classpath) is ignored by it."""
    if str(conf.get(CLASS_ARCHIVE, "true")).strip().lower() == "false":
        return None
    user = conf.get("spark.driver.extraJavaOptions", "")
    if any(option in user for option in ("-Xshare", "SharedArchiveFile", "ArchiveClassesAtExit")):
        return None
    archive = class_archive_file()
    if archive is None:
        return None
    try:
        archive.parent.mkdir(parents=True, exist_ok=True)
        writing = _promote_written(archive)
    except OSError:
        return None
    if archive.exists():
        return f"-XX:SharedArchiveFile={archive} {_ARCHIVE_QUIET}"
    if writing:  # another JVM is writing it: one archive at a time
        return None
    return f"-XX:ArchiveClassesAtExit={archive}.{os.getpid()}.tmp {_ARCHIVE_QUIET}"


def driver_start_options(conf: Mapping[str, str]) -> list[str]:
    """The driver JVM's start options for the settings `conf` (its
    `spark.driver.extraJavaOptions` being the user's own): the class archive
    (`class_archive_options`) and, with `spark.sparkdedalus.jit=quick`, the
    client compiler only (`-XX:TieredStopAtLevel=1`: the JVM compiles Spark's
    code sooner and at less cost, and the compiled code runs slower), unless
    the user's own options choose a compiler (`-XX:...Tiered...`)."""
    options = []
    archive = class_archive_options(conf)
    if archive:
        options += archive.split()
    jit = str(conf.get(JIT, JIT_FULL)).strip().lower()
    if jit not in (JIT_QUICK, JIT_FULL):
        raise UsageError(f"{JIT} is {jit!r}: {JIT_QUICK} or {JIT_FULL}")
    if jit == JIT_QUICK and "Tiered" not in conf.get("spark.driver.extraJavaOptions", ""):
        options.append("-XX:TieredStopAtLevel=1")
    return options


def _prepare_local_env(master: str) -> None:
    if not master.startswith("local"):
        return
    # Bind a local driver to loopback: no "hostname resolves to a loopback address" warning,
    # nothing listening on outside interfaces.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Python workers must run this interpreter (the venv), not whatever `python3` is on PATH,
    # or UDFs cannot import the project's dependencies. pyspark reads only the environment
    # variable for this (spark.pyspark.python is ignored when the JVM is started from Python).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def local_session(
    master: str = "local[2]",
    app_name: str = "sparkdedalus",
    extra_conf: Mapping[str, object] | None = None,
    delta: bool = True,
) -> SparkSession:
    """A classic (py4j) SparkSession configured from conf/spark-defaults.conf,
    its driver sized to the machine (`default_driver_memory`, unless
    spark-defaults.conf or `extra_conf` sets `spark.driver.memory`).

    With ``delta=True`` the Delta jars (``delta_maven_coordinates()``) are added through
    ``spark.jars.packages`` and resolved offline from ~/.m2 (run ``scripts/setup.sh`` first),
    and Delta's SQL extension and catalog are installed. ``extra_conf`` overrides everything
    (a ``spark.driver.extraJavaOptions`` in it is appended to the log4j option).

    Like ``SparkSession.builder.getOrCreate()``, this returns the already running session if
    there is one, in which case JVM-level settings (jars, master, Java options) do not change.
    """
    conf = _session_conf(app_name, extra_conf, delta, start_options=True)
    _prepare_local_env(master)
    builder = SparkSession.builder.master(master)
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if "spark.jars.packages" in conf:
        record_resolved_jars(spark)
    return spark


def remote_session(
    url: str = "local[2]",
    app_name: str = "sparkdedalus",
    extra_conf: Mapping[str, object] | None = None,
    delta: bool = True,
) -> SparkSession:
    """A Spark Connect session: ``SparkSession.builder.remote(url)...getOrCreate()``.

    With ``url="local[...]"`` pyspark starts a Spark Connect server in a local JVM configured
    like ``local_session`` (Delta jars, quiet logs), listening on localhost:15002, and connects
    to it; ``spark.stop()`` stops both. A ``local`` URL fails if a classic session or context
    already exists in this process. With ``url="sc://host:port"`` only runtime SQL settings of
    ``extra_conf`` are sent; the server must already have Delta on its classpath.
    """
    builder = SparkSession.builder.remote(url)
    local = url.startswith("local")
    if local:
        conf = _session_conf(app_name, extra_conf, delta, start_options=True)
        _prepare_local_env(url)
    else:
        conf = {str(k): str(v) for k, v in (extra_conf or {}).items()}
    for key, value in conf.items():
        builder = builder.config(key, value)
    with warnings.catch_warnings():
        if local:
            # pyspark 4.1 starts the local server with every setting, then also tries to set them
            # all on the Connect session and warns for each static one (jars, UI, extensions).
            warnings.filterwarnings(
                "ignore", message=r"Failed to set .* due to \[CANNOT_MODIFY", category=UserWarning
            )
        return builder.getOrCreate()


def session_has_delta(spark: SparkSession) -> bool:
    """Whether the ``delta`` data source can be used in ``spark`` (classic or Spark Connect).

    Probe: analyse ``spark.read.format("delta").load(<path that does not exist>)``. Spark looks
    up the data source first, so a session without the Delta jars fails with
    DATA_SOURCE_NOT_FOUND, while with Delta the lookup succeeds and the error is about the
    missing path (PATH_NOT_FOUND). Cost: one query analysis, no Spark job and nothing written
    (a few ms on a warm classic session, one round trip on Spark Connect). It does not check that
    Delta's SQL extension is configured (needed for MERGE, DESCRIBE HISTORY, ...): look at
    ``spark.conf.get("spark.sql.extensions")`` for that.
    """
    from pyspark.errors import AnalysisException

    path = f"/nonexistent-sparkdedalus-probe/{uuid.uuid4().hex}"
    try:
        spark.read.format("delta").load(path).schema
    except Exception as exc:  # noqa: BLE001
        # Classic sessions fail in load() (without Delta: a raw Py4JJavaError wrapping
        # SparkClassNotFoundException), Connect ones in .schema.
        get_condition = getattr(exc, "getCondition", None)
        condition = (get_condition() if callable(get_condition) else None) or ""
        if "DATA_SOURCE_NOT_FOUND" in condition or "DATA_SOURCE_NOT_FOUND" in str(exc):
            return False
        if isinstance(exc, AnalysisException):  # PATH_NOT_FOUND, DELTA_...: Delta was found
            return True
        raise
    return True
