import pytest


@pytest.fixture
def paths(tmp_path):
    """The edge's channel to the app and the app's own socket (``edgekit.EdgeOnLoopback``)."""
    return str(tmp_path / "edge.sock"), str(tmp_path / "app.sock")
