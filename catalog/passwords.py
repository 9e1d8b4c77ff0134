"""bcrypt hashing, and the rules a password must meet before it is hashed.

bcrypt reads at most 72 bytes and stops at a NUL byte, so longer passwords and NULs are refused
rather than silently shortened. Nothing here ever logs or returns a password.
"""

from __future__ import annotations

import secrets
from functools import cache

import bcrypt

from boxes import codes
from boxes.errors import InvalidInput

MIN_LENGTH = 8
MAX_BYTES = 72


def check_password(password: object) -> bytes:
    if not isinstance(password, str):
        raise InvalidInput("the password must be a string", code=codes.INVALID_PASSWORD)
    raw = password.encode("utf-8")
    if len(password) < MIN_LENGTH or len(raw) > MAX_BYTES or b"\0" in raw:
        raise InvalidInput(code=codes.INVALID_PASSWORD, min_length=MIN_LENGTH, max_bytes=MAX_BYTES)
    return raw


def hash_password(password: str, rounds: int) -> str:
    return bcrypt.hashpw(check_password(password), bcrypt.gensalt(rounds)).decode("ascii")


def verify(password: object, hashed: str) -> bool:
    raw = password.encode("utf-8") if isinstance(password, str) else b""
    if not raw or len(raw) > MAX_BYTES or b"\0" in raw:
        return False
    return bcrypt.checkpw(raw, hashed.encode("ascii"))


def weaker_than(hashed: str, rounds: int) -> bool:
    """Whether a stored hash used fewer rounds than configured now (``$2b$12$...``)."""
    return int(hashed.split("$")[2]) < rounds


@cache
def dummy_hash(rounds: int) -> str:
    """Checked against when the user is unknown, so an unknown name costs as much as a known one."""
    return hash_password(secrets.token_urlsafe(16), rounds)


def new_password() -> str:
    """A random password for seeded accounts, printed once and never stored in clear."""
    return secrets.token_urlsafe(12)
