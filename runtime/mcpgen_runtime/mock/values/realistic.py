"""Plausible values for a scalar subschema, from its `format` and the name of its property.

`guesses(name, schema)` lists candidates — an email address for `format: email` or a property
named `email`, a city for `location`, -5..33 for `temperature`, 0..100 for `humidity` — or
returns `[]`. They are only candidates: prepare.py keeps those valid against the subschema
(as an `enum`, after the schema's own `examples` and `default`), the seed picks one, and a
subschema none of them satisfies is generated from the schema as before. Small fixed tables,
no randomness and no dependency: the same seed gives the same answer with any library version.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["guesses"]

FIRST_NAMES: Final = ("Ada", "Grace", "Alan", "Linus", "Margaret", "Tim", "Barbara", "Dennis")
LAST_NAMES: Final = (
    "Lovelace",
    "Hopper",
    "Turing",
    "Torvalds",
    "Hamilton",
    "Berners-Lee",
    "Liskov",
    "Ritchie",
)
FULL_NAMES: Final = tuple(f"{f} {last}" for f, last in zip(FIRST_NAMES, LAST_NAMES, strict=True))
USERNAMES: Final = ("ada", "grace.h", "aturing", "linus", "mhamilton", "timbl", "bliskov", "dmr")
EMAILS: Final = (
    "ada@example.com",
    "grace.h@example.com",
    "aturing@example.com",
    "linus@example.com",
    "ops@example.org",
    "support@example.net",
    "barbara.liskov@example.edu",
    "dennis@example.io",
)
URLS: Final = (
    "https://example.com/",
    "https://example.org/docs/getting-started",
    "https://api.example.com/v1/items/42",
    "https://www.example.net/about",
    "https://example.io/blog/2026/03/release-notes",
)
HOSTS: Final = ("example.com", "api.example.org", "mail.example.net", "cdn.example.io")
CITIES: Final = ("Berlin", "Lagos", "Tokyo", "Buenos Aires", "Oslo", "Montreal", "Nairobi", "Sydney")
COUNTRIES: Final = ("Germany", "Nigeria", "Japan", "Argentina", "Norway", "Canada", "Kenya", "Australia")
ADDRESSES: Final = ("12 Market Street", "221B Baker Street", "5 Rue de Rivoli", "742 Evergreen Terrace")
CONDITIONS: Final = (
    "sunny",
    "partly cloudy",
    "overcast",
    "light rain",
    "thunderstorms",
    "snow",
    "fog",
    "clear",
)
STATUSES: Final = ("active", "pending", "completed", "failed", "archived")
WORDS: Final = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")
# Word lists below: alike in shape only (tuples of strings), data with nothing to fold.
SENTENCES: Final = (
    "All systems operational.",
    "The quick brown fox jumps over the lazy dog.",
    "Scheduled maintenance is complete.",
    "Your request has been processed.",
    "No further action is required.",
)
TITLES: Final = ("Quarterly report", "Release notes", "Meeting agenda", "Getting started", "Bug triage")
PHONES: Final = ("+1 555 0100", "+44 20 7946 0958", "+49 30 901820", "+81 3 1234 5678")
DATES: Final = ("2026-03-14", "2025-11-02", "2026-07-28", "2024-02-29", "2025-06-18")
TIMES: Final = ("09:30:00Z", "14:05:12Z", "23:59:59Z", "00:00:00Z")
DATE_TIMES: Final = (
    "2026-03-14T09:30:00Z",
    "2025-11-02T14:05:12Z",
    "2026-07-28T23:59:59Z",
    "2024-02-29T00:00:00Z",
    "2025-06-18T12:00:00+02:00",
)
EPOCH_SECONDS: Final = (1767225600, 1773480600, 1785283199, 1709164800, 1750240800)
UUIDS: Final = (
    "3f2b8c1e-9d4a-4e6b-8f21-5c7d9e0a1b2c",
    "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
    "0c9e7d5b-3a1f-4e2d-9b8c-7a6f5e4d3c2b",
    "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a",
)
IDS: Final = ("usr_1001", "ord_4821", "itm_0042", "evt_7315", "doc_2290")
IPV4: Final = ("192.0.2.10", "198.51.100.7", "203.0.113.42", "10.0.0.1")
IPV6: Final = ("2001:db8::1", "2001:db8:85a3::8a2e:370:7334", "fe80::1")
CURRENCIES: Final = ("EUR", "USD", "JPY", "NGN", "GBP")
LANGUAGES: Final = ("en", "de", "ja", "fr", "es")
COLORS: Final = ("red", "green", "blue", "orange", "purple")

# Numbers per kind: (integers, numbers).
NUMBERS: Final[dict[str, tuple[tuple[int, ...], tuple[float, ...]]]] = {
    "temperature": ((-5, 3, 12, 18, 21, 27, 33), (-5.5, 3.2, 12.0, 18.4, 21.5, 27.3, 33.1)),
    "percent": ((12, 35, 48, 63, 77, 91), (12.5, 35.0, 48.2, 63.7, 77.1, 91.4)),
    "count": ((0, 1, 3, 12, 42, 250), (0.0, 1.0, 3.0, 12.0, 42.0, 250.0)),
    "price": ((5, 20, 120, 999), (4.99, 19.5, 120.0, 999.99, 0.25)),
    "id": ((1, 7, 42, 1001, 31337), (1.0, 7.0, 42.0, 1001.0)),
    "age": ((19, 34, 52, 71), (19.0, 34.5, 52.0, 71.0)),
    "latitude": ((52, 6, -33, 35), (52.52, 6.45, -33.87, 35.68, 59.91)),
    "longitude": ((13, 3, 151, 139), (13.405, 3.39, 151.21, 139.69, 10.75)),
    "epoch": (EPOCH_SECONDS, tuple(float(s) for s in EPOCH_SECONDS)),
    "year": ((1999, 2024, 2025, 2026), (1999.0, 2024.0, 2026.0)),
    "rating": ((1, 3, 4, 5), (1.5, 3.0, 4.2, 4.8)),
    "speed": ((3, 12, 25, 40), (3.4, 12.0, 25.5, 40.2)),
    "pressure": ((990, 1005, 1013, 1021), (990.2, 1005.0, 1013.25, 1021.7)),
    "generic": ((1, 2, 3, 5, 8, 13, 42, 100), (0.5, 1.25, 3.14, 12.5, 42.0, 99.9)),
}

# String tables, and the number kinds, by the words a property name is made of (checked in order).
_STRING_WORDS: Final[tuple[tuple[frozenset[str], tuple[str, ...]], ...]] = (
    (frozenset({"email", "mail", "emails"}), EMAILS),
    (frozenset({"firstname", "given", "forename"}), FIRST_NAMES),
    (frozenset({"lastname", "surname", "family"}), LAST_NAMES),
    (frozenset({"username", "login", "handle", "nickname", "user"}), USERNAMES),
    (frozenset({"uuid", "guid"}), UUIDS),
    (frozenset({"url", "uri", "link", "href", "website", "homepage", "avatar", "urls", "links"}), URLS),
    (frozenset({"host", "hostname", "domain"}), HOSTS),
    (frozenset({"ip", "ipv4", "address_ip"}), IPV4),
    (frozenset({"city", "location", "town", "place", "locality", "region"}), CITIES),
    (frozenset({"country"}), COUNTRIES),
    (frozenset({"address", "street"}), ADDRESSES),
    (frozenset({"phone", "telephone", "mobile", "tel"}), PHONES),
    (frozenset({"conditions", "condition", "weather", "forecast", "summary_weather"}), CONDITIONS),
    (frozenset({"status", "state"}), STATUSES),
    (frozenset({"currency"}), CURRENCIES),
    (frozenset({"language", "lang", "locale"}), LANGUAGES),
    (frozenset({"color", "colour"}), COLORS),
    (frozenset({"title", "subject", "headline"}), TITLES),
    (
        frozenset(
            {"description", "message", "text", "comment", "body", "content", "summary", "note", "notes"}
        ),
        SENTENCES,
    ),
    (frozenset({"author", "owner", "assignee", "creator", "fullname", "name", "names"}), FULL_NAMES),
    (frozenset({"id", "key", "ref", "identifier", "ids"}), IDS),
    (frozenset({"date", "day", "birthday", "dob"}), DATES),
    (frozenset({"tag", "tags", "label", "labels", "category", "keyword", "keywords", "type", "kind"}), WORDS),
)
_NUMBER_WORDS: Final[tuple[tuple[frozenset[str], str], ...]] = (
    (frozenset({"temperature", "temp", "celsius"}), "temperature"),
    (frozenset({"humidity", "percent", "percentage", "pct", "probability", "chance"}), "percent"),
    (frozenset({"price", "cost", "amount", "fee", "balance", "salary"}), "price"),
    (frozenset({"latitude", "lat"}), "latitude"),
    (frozenset({"longitude", "lon", "lng", "long"}), "longitude"),
    (frozenset({"timestamp", "epoch", "at", "created", "updated", "modified", "time"}), "epoch"),
    (frozenset({"year"}), "year"),
    (frozenset({"age"}), "age"),
    (frozenset({"rating", "score", "stars"}), "rating"),
    (frozenset({"speed", "wind", "velocity"}), "speed"),
    (frozenset({"pressure"}), "pressure"),
    (
        frozenset(
            {
                "count",
                "total",
                "quantity",
                "qty",
                "size",
                "length",
                "number",
                "num",
                "limit",
                "page",
                "offset",
            }
        ),
        "count",
    ),
    (frozenset({"id", "identifier"}), "id"),
)
_DATE_TIME_WORDS: Final = frozenset(
    {"timestamp", "datetime", "at", "created", "updated", "modified", "time", "since", "until"}
)
_FORMATS: Final[dict[str, tuple[str, ...]]] = {
    "email": EMAILS,
    "idn-email": EMAILS,
    "uri": URLS,
    "url": URLS,
    "iri": URLS,
    "uri-reference": URLS,
    "iri-reference": URLS,
    "date": DATES,
    "date-time": DATE_TIMES,
    "time": TIMES,
    "uuid": UUIDS,
    "ipv4": IPV4,
    "ipv6": IPV6,
    "hostname": HOSTS,
    "idn-hostname": HOSTS,
}


def words_of(name: str) -> list[str]:
    """`createdAt` -> ["created", "at"]; `user_first_name` -> ["user", "first", "name"]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def _types(schema: Mapping[str, Any]) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    return []


def guesses(name: str | None, schema: Mapping[str, Any]) -> list[Any]:
    """Candidate values for a scalar `schema` of a property called `name` (`[]` when none fit)."""
    types = _types(schema)
    found: list[Any] = []
    words = words_of(name) if name else []
    if "string" in types:
        found += _strings(words, schema.get("format"))
    if "integer" in types or "number" in types:
        last = words[-1:]
        kind = next((k for ws, k in _NUMBER_WORDS if ws.intersection(last)), None)
        kind = kind or next((k for ws, k in _NUMBER_WORDS if ws.intersection(words)), "generic")
        integers, numbers = NUMBERS[kind]
        found += list(integers) if "integer" in types else list(numbers)
    return found


def _strings(words: list[str], fmt: Any) -> list[str]:
    if isinstance(fmt, str):
        return list(_FORMATS.get(fmt, ()))  # an unknown format: the schema's own generator knows better
    if not words:
        return list(WORDS)
    last = words[-1]
    if last in _DATE_TIME_WORDS:
        return list(DATE_TIMES)
    # The last two words together (`first_name`), the last word (`home_city`), then any word.
    for key in ("".join(words[-2:]), last):
        for vocabulary, table in _STRING_WORDS:
            if key in vocabulary:
                return list(table)
    for vocabulary, table in _STRING_WORDS:
        if vocabulary.intersection(words):
            return list(table)
    return list(WORDS)
