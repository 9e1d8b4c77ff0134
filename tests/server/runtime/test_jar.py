"""The JVM-side source's jar: built with the JDK's javac on first use, named by its content."""

from __future__ import annotations

import zipfile

import pytest

from server.runtime import jar


def test_the_jar_is_compiled_once_per_content_and_holds_the_source(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = jar.source_jar()
    assert built.parent == tmp_path / "sluice"
    with zipfile.ZipFile(built) as archive:
        assert "sluice/source/LogSourceProvider.class" in archive.namelist()
    stamp = built.stat().st_mtime_ns
    assert jar.source_jar() == built and built.stat().st_mtime_ns == stamp  # not rebuilt
    assert not list(built.parent.glob("*.part"))


def test_without_a_jdk_the_error_says_how_to_install_one(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(jar.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="apt-get install -y openjdk-17-jdk-headless"):
        jar.source_jar()
    assert not (tmp_path / "sluice").exists() or not list((tmp_path / "sluice").iterdir())
