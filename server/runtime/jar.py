"""Sluice's JVM-side streaming source (``java/``), compiled into a jar on first use.

Why in the JVM: a Python streaming source makes Spark start a Python process per query (about
63 MiB and two seconds each, docs/benchmarks.md "Scale"). The Java classes only keep offsets
and turn Arrow batches into Spark's columns; the reading stays in Python, in the server
(``heads.py``, ``source.SourceRows``). The jar is built with the JDK's ``javac`` against the
Spark that runs it, and named by the hash of both, so a changed source or Spark rebuilds it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

JAVA_DIR = Path(__file__).with_name("java")
INSTALL_JDK = "sudo apt-get install -y openjdk-17-jdk-headless"


def spark_jars() -> Path:
    """The directory of the jars of the Spark this process runs (PySpark's own or SPARK_HOME's)."""
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home()) / "jars"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "sluice"


def source_jar() -> Path:
    """The source's jar, compiled now if this source and this Spark have none yet."""
    sources = sorted(JAVA_DIR.rglob("*.java"))
    jars = spark_jars()
    digest = hashlib.sha256(str(sorted(p.name for p in jars.glob("spark-sql*.jar"))).encode())
    for path in sources:
        digest.update(str(path.relative_to(JAVA_DIR)).encode() + b"\0" + path.read_bytes())
    target = cache_dir() / f"sluice-source-{digest.hexdigest()[:16]}.jar"
    if not target.exists():
        _compile(sources, jars, target)
    return target


def _compile(sources: list[Path], jars: Path, target: Path) -> None:
    javac = shutil.which("javac")
    if javac is None:
        raise RuntimeError(f"Sluice's Spark source is compiled with a JDK's javac: {INSTALL_JDK}")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sluice-javac-") as work:
        classes = Path(work)
        run = subprocess.run(
            [javac, "--release", "17", "-nowarn", "-d", str(classes), "-cp", f"{jars}/*"]
            + [str(p) for p in sources],
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            raise RuntimeError(f"compiling Sluice's Spark source failed:\n{run.stderr}")
        partial = target.with_suffix(f".{os.getpid()}.part")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as jar:
            for path in sorted(classes.rglob("*.class")):
                jar.write(path, str(path.relative_to(classes)))
        partial.replace(target)
