"""What the server asks of Spark when the master is not local: authenticated, encrypted, and
with Sluice's code shipped (the cluster itself is exercised by scenarios/test_restart.py)."""

from __future__ import annotations

import stat
import zipfile

import pytest

from boxes.errors import InvalidInput
from server.runtime.cluster import cluster_conf, code_archive, is_local
from server.settings.config import load_settings


@pytest.mark.parametrize(
    "master, local",
    [
        ("local", True),
        ("local[*]", True),
        ("local[2]", True),
        ("spark://h:7077", False),
        ("localhost:7077", False),
    ],
)
def test_only_local_masters_run_without_the_cluster_settings(master, local):
    assert is_local(master) is local


def test_a_cluster_is_authenticated_and_encrypted_with_a_generated_private_secret(tmp_path):
    settings = load_settings(overrides={"data_dir": tmp_path, "spark_driver_host": "10.0.0.5"})
    conf = cluster_conf(settings)
    assert conf["spark.authenticate"] == "true"
    assert conf["spark.network.crypto.enabled"] == conf["spark.io.encryption.enabled"] == "true"
    assert conf["spark.driver.host"] == conf["spark.driver.bindAddress"] == "10.0.0.5"
    secret_file = tmp_path / "spark_secret"
    assert conf["spark.authenticate.secret"] == secret_file.read_text().strip()
    assert len(conf["spark.authenticate.secret"]) >= 40
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    assert cluster_conf(settings)["spark.authenticate.secret"] == conf["spark.authenticate.secret"]
    assert "spark.pyspark.python" not in conf


def test_a_configured_spark_secret_is_used_and_a_well_known_one_refused(tmp_path):
    given = load_settings(overrides={"data_dir": tmp_path, "spark_secret": "x" * 40})
    assert cluster_conf(given)["spark.authenticate.secret"] == "x" * 40
    weak = load_settings(overrides={"data_dir": tmp_path, "spark_secret": "changeme"})
    with pytest.raises(InvalidInput, match="WEAK_SECRET.*spark_secret"):
        cluster_conf(weak)


def test_the_code_archive_holds_the_packages_and_is_named_by_its_content(tmp_path):
    archive = code_archive(tmp_path)
    names = zipfile.ZipFile(archive).namelist()
    assert {"server/runtime/source.py", "boxes/countwindow.py", "catalog/__init__.py"} <= set(names)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert code_archive(tmp_path) == archive and len(list(tmp_path.iterdir())) == 1
