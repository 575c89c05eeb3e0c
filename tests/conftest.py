import pytest


@pytest.fixture(scope="session")
def spark():
    """A classic local SparkSession with Delta Lake, shared by the whole test session."""
    from sparkdedalus.spark.session import local_session

    session = local_session()
    yield session
    session.stop()
