"""Bearer tokens: generated once, shown once, stored hashed, looked up by a public prefix.

A token reads `<kind>_<prefix>_<secret>`: `bhr_` for runners (agents), `bhp_` for people's personal
tokens. The prefix is stored in clear so a lookup is one indexed query; the whole token is stored
only as its SHA-256. A slow password hash is not needed: the secret carries 256 bits of randomness,
so there is nothing to brute-force offline.
"""

import hashlib
import hmac
import secrets
from dataclasses import dataclass

RUNNER_KIND = "bhr"
PERSONAL_KIND = "bhp"
PREFIX_LENGTH = 8


@dataclass(frozen=True)
class IssuedToken:
    """A freshly generated token: `plaintext` goes to the user once, the rest is stored."""

    plaintext: str
    prefix: str
    digest: str


def token_digest(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode()).hexdigest()


def token_issue(kind: str) -> IssuedToken:
    prefix = secrets.token_hex(PREFIX_LENGTH // 2)
    plaintext = f"{kind}_{prefix}_{secrets.token_urlsafe(32)}"
    return IssuedToken(plaintext=plaintext, prefix=prefix, digest=token_digest(plaintext))


def token_split(plaintext: str) -> tuple[str, str] | None:
    """(kind, prefix) of a well-formed token, None for anything else."""
    parts = plaintext.split("_", 2)
    if len(parts) != 3 or parts[0] not in (RUNNER_KIND, PERSONAL_KIND):
        return None
    if len(parts[1]) != PREFIX_LENGTH or not parts[2]:
        return None
    return parts[0], parts[1]


def token_matches(plaintext: str, digest: str) -> bool:
    return hmac.compare_digest(token_digest(plaintext), digest)
