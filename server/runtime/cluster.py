"""What a Spark master other than ``local[...]`` needs from Sluice (docs/deploy.md).

On a cluster the executors run on other hosts: they must reach the driver at an address that
is not ``localhost``, run a Python that exists there, and import Sluice's own modules (a
streaming source, a count window's state function) that are pickled by reference, so the code
travels with the application as an archive. Rows cross the network between driver and
executors unlabelled by Spark's own means, so every connection is authenticated with a shared
secret and encrypted, and what executors spill to disk is encrypted too.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path
from typing import Any

# The packages executors import; everything else they need comes from their Python.
SHIPPED_PACKAGES = ("boxes", "catalog", "server")


def is_local(master: str) -> bool:
    """Whether Spark runs inside the driver's JVM (nothing to ship, nobody to trust)."""
    return master == "local" or master.startswith("local[")


def cluster_conf(config: Any) -> dict[str, str]:
    """Spark settings for a cluster from the server's settings (``spark_driver_host`` …
    ``spark_secret``); ``spark_conf`` is applied after them by the caller."""
    conf = {
        "spark.driver.host": config.spark_driver_host,
        "spark.driver.bindAddress": config.spark_driver_host,
        "spark.driver.port": str(config.spark_driver_port),
        "spark.blockManager.port": str(config.spark_block_manager_port),
        "spark.executor.memory": config.spark_executor_memory,
        "spark.authenticate": "true",
        "spark.authenticate.secret": config.ensure_spark_secret(),
        "spark.network.crypto.enabled": "true",
        "spark.io.encryption.enabled": "true",
    }
    if config.spark_python:
        conf["spark.pyspark.python"] = config.spark_python
    return conf


def code_archive(directory: Path) -> Path:
    """A zip of Sluice's packages (sources and their data files, no caches) in ``directory``,
    named by its content so executors never run a stale copy; written once per content."""
    root = Path(__file__).resolve().parents[2]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for package in SHIPPED_PACKAGES:
            for path in sorted((root / package).rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    info = zipfile.ZipInfo(str(path.relative_to(root)), (1980, 1, 1, 0, 0, 0))
                    archive.writestr(info, path.read_bytes(), zipfile.ZIP_DEFLATED)
    data = buffer.getvalue()
    target = directory / f"sluice-{hashlib.sha256(data).hexdigest()[:16]}.zip"
    if not target.exists():
        directory.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".part")
        partial.write_bytes(data)
        partial.replace(target)
    return target
