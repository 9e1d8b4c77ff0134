"""What the fuzz tests share: how many examples, and sessions of the demo's users that outlive
what a fuzzer does to them (a logout, a disabled user, a reset password)."""

from __future__ import annotations

import os
import time

import requests
from schemathesis.transport.requests import ManagedCookiesSession

from server.settings.limits import CHANGEABLE

# Examples per operation and user in `make test`; `make fuzz` sets more (not SLUICE_*: the
# server under test would read that as a setting).
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "5"))
ROLES = {"joe": "ADMIN", "ed": "INFO_PROVIDER", "al": "CUSTOMER1", "bob": "CUSTOMER2"}
USERS = tuple(ROLES)


class Sessions:
    """A bearer token per demo user, logged in again whenever the server ended it."""

    def __init__(self, server) -> None:
        self.url, self.logins = server.url, server.logins
        self.tokens: dict[str, str] = {}
        # What the fuzz cases are sent on: kept-alive connections (a new one per case cost a
        # connect and a close each), its cookies dropped after each case as on a fresh session.
        self.http = ManagedCookiesSession()

    def login(self, user: str) -> str:
        body = {"user": user, "password": self.logins[user]}
        for _ in range(5):
            answer = requests.post(f"{self.url}/api/v1/auth/login", json=body, timeout=60)
            if answer.status_code == 429:  # the fuzzer lowered the login limit, then failed logins
                if "joe" in self.tokens:
                    self.reset_limits()
                time.sleep(answer.json()["error"]["details"]["retry_after"])  # poll: as told
            elif answer.status_code == 401 and user != "joe":  # the fuzzer, as joe, changed it
                self.restore(user)
            else:
                break
        assert answer.status_code == 200, answer.text
        return answer.json()["token"]

    def reset_limits(self) -> None:
        """Give the limits an administrator may change back their configured values."""
        answer = requests.patch(
            f"{self.url}/api/v1/system/settings",
            json=dict.fromkeys(CHANGEABLE),
            headers=self.headers("joe"),
            timeout=60,
        )
        assert answer.status_code == 200, answer.text

    def restore(self, user: str) -> None:
        """Give a demo user back its password, its role and its place (as joe)."""
        users = f"{self.url}/api/v1/users"
        password, joe = self.logins[user], self.headers("joe")
        changed = requests.patch(
            f"{users}/{user}", json={"enabled": True, "password": password}, headers=joe, timeout=60
        )
        if changed.status_code == 404:
            body = {"name": user, "password": password, "roles": [ROLES[user]]}
            requests.post(users, json=body, headers=joe, timeout=60)
        requests.put(f"{users}/{user}/roles/{ROLES[user]}", headers=joe, timeout=60)

    def headers(self, user: str, fresh: bool = False) -> dict[str, str]:
        """``fresh``: a session of its own (for an operation that may end it)."""
        if fresh:
            return {"Authorization": f"Bearer {self.login(user)}"}
        if user not in self.tokens:
            self.tokens[user] = self.login(user)
        return {"Authorization": f"Bearer {self.tokens[user]}"}

    def answered(self, user: str, status: int) -> None:
        """After a 401 the session may have been ended: log in again next time."""
        if status == 401:
            self.tokens.pop(user, None)
