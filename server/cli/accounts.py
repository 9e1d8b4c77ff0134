"""``sluice user add NAME --admin``: an administrator added straight into the catalog file.

For the first administrator, or to regain access: whoever can run it can read the data
directory anyway. The password is read from the terminal without echo, or from standard input
when it is not a terminal (``echo "$PW" | sluice user add joe --admin``); it never appears in
arguments, where other users of the machine could see it.
"""

from __future__ import annotations

import getpass

from catalog import Catalog
from catalog.bootstrap import add_admin
from server.app import catalog_url
from server.settings.config import load_settings


def _password(stdin) -> str:
    if stdin.isatty():
        first = getpass.getpass("Password: ")
        if getpass.getpass("Again: ") != first:
            raise SystemExit("the passwords differ")
        return first
    return stdin.readline().rstrip("\n")


def add_admin_user(config_file: str | None, name: str, stdin, out) -> int:
    settings = load_settings(config_file)
    catalog = Catalog.open(catalog_url(settings), bcrypt_rounds=settings.bcrypt_rounds)
    try:
        if not add_admin(catalog, name, _password(stdin)):
            print(f"user {name} exists already; nothing changed", file=out)
            return 1
    finally:
        catalog.close()
    print(f"administrator {name} added", file=out)
    return 0
