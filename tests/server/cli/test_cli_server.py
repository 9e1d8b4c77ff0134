"""``sluice user add NAME --admin``: the first administrator, straight into the catalog file."""

from __future__ import annotations

import io

import yaml

from catalog import Catalog
from server.app import catalog_url
from server.cli.main import main
from server.settings.config import load_settings


def test_user_add_admin_reads_the_password_from_stdin(tmp_path, monkeypatch, capsys):
    config = tmp_path / "sluice.yaml"
    config.write_text(yaml.safe_dump({"data_dir": str(tmp_path), "bcrypt_rounds": 4}))
    monkeypatch.setattr("sys.stdin", io.StringIO("a long password\n"))
    assert main(["user", "add", "root", "--admin", "--config", str(config)]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("another password\n"))
    assert main(["user", "add", "root", "--admin", "--config", str(config)]) == 1
    assert "exists already" in capsys.readouterr().out
    cat = Catalog.open(catalog_url(load_settings(config)), bcrypt_rounds=4)
    try:
        _, root = cat.sessions.login("root", "a long password")
        assert root.roles == frozenset({"ADMIN"})
    finally:
        cat.close()


def test_user_add_refuses_a_weak_password(tmp_path, monkeypatch, capsys):
    config = tmp_path / "sluice.yaml"
    config.write_text(yaml.safe_dump({"data_dir": str(tmp_path), "bcrypt_rounds": 4}))
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    assert main(["user", "add", "root", "--admin", "--config", str(config)]) == 2
    assert "INVALID_PASSWORD" in capsys.readouterr().err
