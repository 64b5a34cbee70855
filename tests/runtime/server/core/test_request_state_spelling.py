"""A requestState has exactly one spelling: every other spelling of the same bytes is refused.

Lenient base64 decoding used to accept padding, characters outside the alphabet and other
values of a last character's unused bits, so one state had many spellings — which defeats
anything that keys on the token (single-use tracking, caches, logs).
"""

from __future__ import annotations

import base64
import string

import pytest

from mcpgen_runtime.server.core.request_state import StateCodec, StateError

ALPHABET = string.ascii_letters + string.digits + "-_"


@pytest.fixture(scope="module")
def codec() -> StateCodec:
    return StateCodec(["k" * 32])


@pytest.fixture(scope="module")
def token(codec: StateCodec) -> str:
    return codec.seal(principal="", request="r", asked=["a"], carried={"x": 1}, state={"n": 2})


def _same_bytes_spellings(part: str) -> list[str]:
    """Other unpadded spellings that lenient decoding maps to the same bytes: the last character
    with different unused low bits."""
    if len(part) % 4 in (0, 1):
        return []
    data = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    spellings = []
    for char in ALPHABET:
        other = part[:-1] + char
        if other != part and base64.urlsafe_b64decode(other + "=" * (-len(other) % 4)) == data:
            spellings.append(other)
    return spellings


def _variants(token: str) -> list[str]:
    version, payload, mac = token.split(".")
    variants = [token + "=", token + "==", token + " ", " " + token, token + "\n"]
    for index, part in ((1, payload), (2, mac)):
        pieces = [version, payload, mac]
        for extra in ("=", "==", "!", "*", " ", "+", "/", "\x00", "é"):
            for at in (0, len(part) // 2, len(part)):
                pieces[index] = part[:at] + extra + part[at:]
                variants.append(".".join(pieces))
        for other in _same_bytes_spellings(part):
            pieces[index] = other
            variants.append(".".join(pieces))
        pieces[index] = part.replace("-", "+").replace("_", "/")
        if pieces[index] != part:
            variants.append(".".join(pieces))
    return variants


def test_the_canonical_spelling_opens(codec: StateCodec, token: str) -> None:
    assert codec.open(token, principal="", request="r")["s"] == {"n": 2}


def test_the_mac_has_spare_bits_so_the_test_covers_them(token: str) -> None:
    assert _same_bytes_spellings(token.split(".")[2]), (
        "a 32-byte MAC leaves unused bits in its last character"
    )


def test_every_other_spelling_is_refused(codec: StateCodec, token: str) -> None:
    variants = _variants(token)
    assert len(variants) > 50
    accepted = []
    for variant in variants:
        try:
            codec.open(variant, principal="", request="r")
        except StateError:
            continue
        accepted.append(variant)
    assert not accepted, f"non-canonical spellings accepted: {accepted[:5]}"
