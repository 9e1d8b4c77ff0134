"""A Spark home whose Python workers import PySpark's compiled modules, not its zip.

PySpark from pip ships its Python code twice: as the installed package (compiled to bytecode
when installed) and as ``python/lib/pyspark.zip``, which Spark puts first on every Python
worker's path. Python keeps no bytecode for a zip, so each worker compiles the PySpark modules
it imports: 0.68 s of CPU where the package takes 0.14 s. For each count window's
(``transformWithStateInPandas``) first batch after its query starts, the driver starts a
Python worker and waits a fixed 10 s, which no setting changes, for it to connect back
(``PythonWorkerFactory.createSimpleWorker``). On a busy machine that failed: six count-window
diagrams, four busy loops, all six failed with "Python worker failed to connect back."; with
this home, none did (docs/architecture.md, "Count windows under load").

So Spark runs from a home that links to everything of PySpark's but ``python/``: the same
scripts, jars and configuration, while its workers find no zip and import the package. A
``SPARK_HOME`` set by the operator (a Spark distribution) is used as it is.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from server.runtime.jar import cache_dir

ZIPPED = Path("python", "lib", "pyspark.zip")


def pyspark_home() -> Path:
    """Where the pip-installed PySpark keeps its Spark (scripts, jars, the zipped Python)."""
    import pyspark

    return Path(pyspark.__file__).parent


def worker_home(installed: Path | None = None) -> Path | None:
    """The Spark home to run with (made on first use): ``installed``'s without its Python;
    None if ``SPARK_HOME`` is set or ``installed`` ships no zipped Python."""
    installed = installed or pyspark_home()
    if os.environ.get("SPARK_HOME") or not (installed / ZIPPED).exists():
        return None
    release = str(installed.resolve()).encode() + (installed / "version.py").read_bytes()
    digest = hashlib.sha256(release).hexdigest()[:16]
    home = cache_dir() / f"spark-home-{digest}"
    if not home.exists():
        home.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=f"{home.name}.", dir=home.parent))
        for entry in installed.iterdir():
            if entry.name != ZIPPED.parts[0]:
                (partial / entry.name).symlink_to(entry.resolve())
        try:
            partial.rename(home)
        except OSError:  # another process made it meanwhile
            shutil.rmtree(partial)
    return home
