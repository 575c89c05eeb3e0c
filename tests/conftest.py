import os
import random

import pytest

#: The seed of the differential tests' fresh generated programs: SPARKDEDALUS_SEED
#: when set (to replay a run), else a new one every run, printed in pytest's header.
FRESH_SEED = int(os.environ.get("SPARKDEDALUS_SEED") or random.SystemRandom().randrange(2 ** 32))


SEED_LINE = f"fresh generated programs: SPARKDEDALUS_SEED={FRESH_SEED} (set it to replay them)"


def pytest_report_header(config):
    return SEED_LINE


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(SEED_LINE)  # also under -q, which hides the header


@pytest.fixture(scope="session")
def fresh_seed():
    return FRESH_SEED


@pytest.fixture(scope="session")
def spark():
    """A classic local SparkSession with Delta Lake, shared by the whole test session.
    Its runs place every tick on Spark (`spark.sparkdedalus.placement=spark`), so
    that the tests of Spark's plans, jobs and partitions test them; the tests of
    the driver placement ask for it (`engine_helpers.placement`)."""
    from sparkdedalus.plumbing.session import local_session
    from sparkdedalus.spark.placement import SETTING

    session = local_session()
    session.conf.set(SETTING, "spark")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def interpreted_after(request):
    """A test that used the shared session leaves it interpreting expressions,
    as conf/spark-defaults.conf sets it: a run whose last tick compiled keeps
    the session compiled (spark/codegen.py), which would carry into the next test."""
    yield
    if "spark" in request.fixturenames:
        from sparkdedalus.spark.codegen import INTERPRETED

        session = request.getfixturevalue("spark")
        for key, value in INTERPRETED.items():
            session.conf.set(key, value)


@pytest.fixture(params=("driver", "spark"))
def placed(spark, request):
    """The shared session, its runs placed in the driver (DuckDB) or on Spark
    (`spark.sparkdedalus.placement`), the session's own setting back after."""
    from engine_helpers import placement

    with placement(spark, request.param):
        yield spark
