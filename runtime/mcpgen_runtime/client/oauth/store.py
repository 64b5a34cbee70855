"""Where logins are kept between runs: a `TokenStore` holds small JSON records by key.

- `FileTokenStore`: one JSON file, mode 0600 in a 0700 directory, in the platform's user config
  directory (`platformdirs`), or `$MCPGEN_TOKEN_FILE`; written atomically.
- `KeyringTokenStore`: the operating system's keyring (`keyring` package), when installed and
  usable.
- `MemoryTokenStore`: this process only (tests, one-shot scripts, parallel runs).

`default_token_store()` picks the keyring when it works, else the file (`$MCPGEN_TOKEN_STORE`
= `file`, `keyring` or `memory` forces one). Records hold tokens and client secrets: they go
nowhere else, and no store's repr shows them (AUTH-16).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = ["FileTokenStore", "KeyringTokenStore", "MemoryTokenStore", "TokenStore", "default_token_store"]

_INDEX = "mcpgen-index"  # the keyring cannot list its entries: this one lists ours


@runtime_checkable
class TokenStore(Protocol):
    def load(self, key: str) -> dict[str, Any] | None: ...

    def save(self, key: str, record: dict[str, Any]) -> None: ...

    def delete(self, key: str) -> None: ...

    def names(self) -> list[str]: ...


class MemoryTokenStore:
    def __init__(self) -> None:
        self._records: dict[str, dict[str, Any]] = {}

    def load(self, key: str) -> dict[str, Any] | None:
        record = self._records.get(key)
        return json.loads(json.dumps(record)) if record is not None else None

    def save(self, key: str, record: dict[str, Any]) -> None:
        self._records[key] = json.loads(json.dumps(record))

    def delete(self, key: str) -> None:
        self._records.pop(key, None)

    def names(self) -> list[str]:
        return sorted(self._records)

    def __repr__(self) -> str:
        return f"MemoryTokenStore({len(self._records)} records)"


def default_token_file() -> Path:
    override = os.environ.get("MCPGEN_TOKEN_FILE")
    if override:
        return Path(override)
    import platformdirs  # the auth extra

    return Path(platformdirs.user_config_dir("mcpgen", appauthor=False)) / "tokens.json"


class FileTokenStore:
    """Records in one JSON file readable by its owner only (0600)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_token_file()
        self._lock = threading.Lock()

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temp = tempfile.mkstemp(prefix=".tokens-", dir=self.path.parent)  # created 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=1, sort_keys=True)
            os.chmod(temp, 0o600)
            os.replace(temp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise

    def load(self, key: str) -> dict[str, Any] | None:
        record = self._read().get(key)
        return record if isinstance(record, dict) else None

    def save(self, key: str, record: dict[str, Any]) -> None:
        with self._lock:
            data = self._read()
            data[key] = record
            self._write(data)

    def delete(self, key: str) -> None:
        with self._lock:
            data = self._read()
            if data.pop(key, None) is not None:
                self._write(data)

    def names(self) -> list[str]:
        return sorted(self._read())

    def __repr__(self) -> str:
        return f"FileTokenStore({str(self.path)!r})"


class KeyringTokenStore:
    """Records in the OS keyring under `service`, one password entry per key."""

    def __init__(self, service: str = "mcpgen") -> None:
        import keyring  # optional: present only when the user installed it

        self._keyring = keyring
        self.service = service

    def load(self, key: str) -> dict[str, Any] | None:
        text = self._keyring.get_password(self.service, key)
        try:
            record = json.loads(text) if text else None
        except ValueError:
            return None
        return record if isinstance(record, dict) else None

    def save(self, key: str, record: dict[str, Any]) -> None:
        self._keyring.set_password(self.service, key, json.dumps(record))
        keys = self.names()
        if key not in keys:
            self._keyring.set_password(self.service, _INDEX, json.dumps([*keys, key]))

    def delete(self, key: str) -> None:
        with contextlib.suppress(Exception):
            self._keyring.delete_password(self.service, key)
        keys = self.names()
        if key in keys:
            keys.remove(key)
            self._keyring.set_password(self.service, _INDEX, json.dumps(keys))

    def names(self) -> list[str]:
        text = self._keyring.get_password(self.service, _INDEX)
        try:
            keys = json.loads(text) if text else []
        except ValueError:
            return []
        return sorted(key for key in keys if isinstance(key, str)) if isinstance(keys, list) else []

    def __repr__(self) -> str:
        return f"KeyringTokenStore({self.service!r})"


def _usable_keyring() -> KeyringTokenStore | None:
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return None
    try:
        backend = keyring.get_keyring()
    except Exception:
        return None
    if isinstance(backend, fail.Keyring) or "null" in type(backend).__name__.lower():
        return None
    return KeyringTokenStore()


def default_token_store() -> TokenStore:
    choice = os.environ.get("MCPGEN_TOKEN_STORE", "").lower()
    if choice == "memory":
        return MemoryTokenStore()
    if choice == "file":
        return FileTokenStore()
    if choice == "keyring":
        return KeyringTokenStore()
    return _usable_keyring() or FileTokenStore()
