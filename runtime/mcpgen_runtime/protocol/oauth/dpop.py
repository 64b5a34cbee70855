"""DPoP (RFC 9449), both sides, without I/O: a client's key and the proof it sends with each request,
and a server's check of a proof. MCP's DPoP extension (SEP-1932) uses it for the token request and
for every request to the MCP server.

- `DPoPKey`: an ES256 key pair (P-256) made per login and kept with the tokens; `proof(method, url,
  access_token=..., nonce=...)` is a fresh `dpop+jwt` (RFC 9449 §4.2: `jti`, `htm`, `htu`, `iat`, and
  `ath` when a token goes with it, `nonce` when the server asked for one). The private key never
  appears in a repr.
- `check_proof(...)`: RFC 9449 §4.3 — one well-formed proof, `typ` `dpop+jwt`, an asymmetric `alg`,
  a public `jwk` that verifies the signature, `htm`/`htu` of this request, `iat` within the window,
  `ath` of the presented token; returns the key's thumbprint (`jkt`, RFC 7638) for the token's
  `cnf.jkt` and the `jti` for the replay check, which the caller keeps.

joserfc is the `mcpgen-runtime[auth]` extra.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

try:
    from joserfc import jws, jwt
    from joserfc.errors import JoseError
    from joserfc.jwk import ECKey, JWKRegistry
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("DPoP needs the auth extra: pip install 'mcpgen-runtime[auth]'") from exc

__all__ = [
    "ALGORITHMS",
    "DPOP_TYP",
    "MAX_PROOF_CHARS",
    "DPoPKey",
    "DPoPProofError",
    "Proof",
    "access_token_hash",
    "check_proof",
    "target_uri",
]

DPOP_TYP: Final = "dpop+jwt"
# RFC 9449 §4.3: asymmetric algorithms only; the ones joserfc verifies.
ALGORITHMS: Final = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA")
MAX_PROOF_CHARS: Final = 8192  # a proof is a header a peer controls
DEFAULT_MAX_AGE: Final = 300.0  # seconds either side of `iat` a proof is accepted (the harness's window)


class DPoPProofError(ValueError):
    """A DPoP proof that does not pass RFC 9449 §4.3; the message says which check."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def access_token_hash(token: str) -> str:
    """`ath`: base64url(SHA-256(the access token's ASCII bytes))."""
    return _b64(hashlib.sha256(token.encode("ascii")).digest())


def target_uri(url: str) -> str:
    """`htu` of a request to `url`: without query and fragment (RFC 9449 §4.2), scheme and host in
    lower case and a default port left out (RFC 3986 §6.2.3), so both sides compare alike."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and (scheme, port) not in (("http", 80), ("https", 443)):
        host += f":{port}"
    return urlunsplit((scheme, host, parts.path or "/", "", ""))


@dataclass(frozen=True)
class DPoPKey:
    """A client's DPoP key pair (ES256). `to_dict`/`from_dict` keep it with the tokens."""

    private_jwk: Mapping[str, Any] = field(repr=False)

    @classmethod
    def generate(cls) -> DPoPKey:
        return cls(ECKey.generate_key("P-256", private=True).as_dict(private=True))

    @classmethod
    def from_dict(cls, data: Any) -> DPoPKey | None:
        if (
            not isinstance(data, Mapping)
            or data.get("kty") != "EC"
            or data.get("crv") != "P-256"
            or "d" not in data
        ):
            return None
        try:
            ECKey.import_key(dict(data))
        except (JoseError, ValueError, TypeError):
            return None
        return cls(dict(data))

    def to_dict(self) -> dict[str, Any]:
        return dict(self.private_jwk)

    @functools.cached_property
    def _key(self) -> ECKey:
        return ECKey.import_key(dict(self.private_jwk))  # imported once: a proof per request signs with it

    @functools.cached_property
    def public_jwk(self) -> dict[str, Any]:
        return {name: self.private_jwk[name] for name in ("kty", "crv", "x", "y")}

    @functools.cached_property
    def thumbprint(self) -> str:
        """`jkt`: the RFC 7638 SHA-256 thumbprint a bound token's `cnf.jkt` names."""
        return str(self._key.thumbprint())

    def proof(
        self,
        method: str,
        url: str,
        *,
        access_token: str | None = None,
        nonce: str | None = None,
        now: float | None = None,
    ) -> str:
        """A fresh proof for one request (a new `jti` each time: RFC 9449 §11.1)."""
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(18),
            "htm": method.upper(),
            "htu": target_uri(url),
            "iat": int(time.time() if now is None else now),
        }
        if access_token is not None:
            claims["ath"] = access_token_hash(access_token)
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": DPOP_TYP, "alg": "ES256", "jwk": self.public_jwk}
        return jwt.encode(header, claims, self._key, algorithms=["ES256"])


@dataclass(frozen=True)
class Proof:
    """What a checked proof tells the server: the key's thumbprint, the proof's id, its nonce."""

    jkt: str
    jti: str
    iat: float
    nonce: str | None = None


def check_proof(
    proof: str | None,
    *,
    method: str,
    url: str,
    access_token: str | None = None,
    now: float | None = None,
    max_age: float = DEFAULT_MAX_AGE,
) -> Proof:
    """RFC 9449 §4.3 for one request; DPoPProofError naming the check that failed. The caller
    compares `jkt` with the token's `cnf.jkt`, refuses a `jti` seen before, and checks `nonce`."""
    if not proof:
        raise DPoPProofError("no DPoP proof")
    if len(proof) > MAX_PROOF_CHARS or "," in proof:
        raise DPoPProofError("more than one DPoP proof, or one too long")
    try:
        compact = jws.extract_compact(proof.encode("ascii"))
    except (JoseError, ValueError, UnicodeError):
        raise DPoPProofError("the DPoP proof is not a well-formed JWT") from None
    header = compact.headers()
    if header.get("typ") != DPOP_TYP:
        raise DPoPProofError("the DPoP proof's typ is not dpop+jwt")
    alg = header.get("alg")
    if alg not in ALGORITHMS:
        raise DPoPProofError("the DPoP proof's alg is not an asymmetric algorithm")
    jwk_data = header.get("jwk")
    if not isinstance(jwk_data, dict) or "d" in jwk_data or "p" in jwk_data:
        raise DPoPProofError("the DPoP proof has no public jwk (or carries a private key)")
    try:
        key = JWKRegistry.import_key(dict(jwk_data))
        claims = jwt.decode(proof, key, algorithms=[alg]).claims
    except (JoseError, ValueError, TypeError):
        raise DPoPProofError("the DPoP proof's signature does not verify") from None
    jti = claims.get("jti")
    if not isinstance(jti, str) or not jti or len(jti) > 256:
        raise DPoPProofError("the DPoP proof has no jti")
    if claims.get("htm") != method.upper():
        raise DPoPProofError("the DPoP proof's htm is not this request's method")
    htu = claims.get("htu")
    if not isinstance(htu, str) or "?" in htu or "#" in htu or target_uri(htu) != target_uri(url):
        raise DPoPProofError("the DPoP proof's htu is not this request's URL")
    iat = claims.get("iat")
    current = time.time() if now is None else now
    if not isinstance(iat, int | float) or isinstance(iat, bool) or abs(current - iat) > max_age:
        raise DPoPProofError("the DPoP proof's iat is outside the accepted window")
    if access_token is not None and claims.get("ath") != access_token_hash(access_token):
        raise DPoPProofError("the DPoP proof's ath does not match the access token")
    nonce = claims.get("nonce")
    return Proof(str(key.thumbprint()), jti, float(iat), nonce if isinstance(nonce, str) else None)
