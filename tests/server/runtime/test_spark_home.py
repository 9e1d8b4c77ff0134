"""Spark's Python workers import PySpark's compiled package, not ``python/lib/pyspark.zip``:
compiling the zip's modules in every new worker made the driver's count-window workers miss
Spark's fixed 10 s to connect back on a busy machine (issue 42; ``sparkhome.py``)."""

from __future__ import annotations

from pathlib import Path

from server.runtime import sparkhome


def test_the_sessions_python_workers_import_pyspark_compiled(spark):
    def where(_) -> str:
        import pyspark

        return pyspark.__file__

    (found,) = spark.sparkContext.parallelize([0], 1).map(where).collect()
    assert ".zip" not in found and Path(found) == Path(sparkhome.pyspark_home(), "__init__.py")


def test_the_home_links_all_but_the_zipped_python_and_an_operators_home_is_kept(
    tmp_path, monkeypatch
):
    installed = tmp_path / "pyspark"
    for part in ("bin", "jars", "python/lib"):
        (installed / part).mkdir(parents=True)
    (installed / sparkhome.ZIPPED).write_bytes(b"")
    (installed / "version.py").write_text("__version__ = '4.3.0'\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("SPARK_HOME", raising=False)
    home = sparkhome.worker_home(installed)
    assert home is not None and home.parent == tmp_path / "cache" / "sluice"
    assert sorted(p.name for p in home.iterdir()) == ["bin", "jars", "version.py"]
    assert (home / "jars").resolve() == installed / "jars"
    assert sparkhome.worker_home(installed) == home  # made once
    monkeypatch.setenv("SPARK_HOME", str(installed))
    assert sparkhome.worker_home(installed) is None
