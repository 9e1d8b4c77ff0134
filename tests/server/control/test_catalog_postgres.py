"""The server on a PostgreSQL catalog (``SLUICE_CATALOG_URL``, docs/deploy.md): it migrates an
empty database and serves from it, and a change another server makes there reaches this one's
decisions through the catalog's notices."""

from __future__ import annotations

from serverkit import PASSWORD, overrides

from catalog import Catalog
from server.app import close_app, create_app


def _token(client, user: str) -> str:
    response = client.post("/api/v1/auth/login", json={"user": user, "password": PASSWORD})
    assert response.status_code == 200, response.json
    return response.json["token"]


def test_a_server_on_postgresql_sees_another_servers_change(tmp_path, postgres, monkeypatch):
    url = postgres.blank()
    monkeypatch.setenv("SLUICE_CATALOG_URL", url)
    app = create_app(overrides(tmp_path, admin_user="joe", admin_password=PASSWORD))
    try:
        catalog = app.extensions["sluice"].catalog
        assert catalog.core.store.dialect.name == "postgresql"
        assert not (tmp_path / "catalog.sqlite").exists()
        joe = catalog.sessions.login("joe", PASSWORD)[1]
        catalog.accounts.add_role(joe, "CUSTOMER1")
        catalog.accounts.add_user(joe, "al", PASSWORD, ["CUSTOMER1"])
        client = app.test_client()
        al = {"Authorization": f"Bearer {_token(client, 'al')}"}
        assert client.get("/api/v1/auth/whoami", headers=al).status_code == 200
        other = Catalog.open(url, bcrypt_rounds=4)  # another server on the same database
        try:
            other.accounts.set_enabled(other.sessions.login("joe", PASSWORD)[1], "al", False)
        finally:
            other.close()
        catalog.core.store.settle()
        assert client.get("/api/v1/auth/whoami", headers=al).status_code == 401
    finally:
        close_app(app)
