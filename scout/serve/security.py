"""Who may call ``scout serve``, decided from the config and a request's headers alone.

Pure functions and one settings object, no web framework, so ``scout serve --check`` needs no
extra and every rule is tested without a server. The rules (docs/design.md, "Serving in front of
a public channel"):

- Keys never fail open: a named ``api_keys_env`` that holds no key, or no keys on an address
  other than loopback, refuses to start unless ``[serve] open = true``.
- A client is its address (an IPv6 client its /64), never anything it sends: the proxy's
  ``X-Forwarded-For`` is read only from a peer in ``trusted_proxies``, right to left, skipping
  trusted proxies.
- A request's ``Host`` must name the listening host, a loopback name or an ``allowed_hosts``
  entry (421 otherwise: DNS rebinding). A POST's ``Origin`` (else ``Sec-Fetch-Site``) must be
  the page's own or a listed ``cors_origins`` (403 otherwise); a request with neither header is a
  script, not a browser, and is not refused for it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from scout.config import Config, host_name
from scout.errors import ConfigError

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})  # noqa: S104 - names, not a bind
MAX_FORWARDED = 32  # X-Forwarded-For entries read at most, from the right
MIN_KEY_CHARS = 16  # shorter keys can be guessed, even at the rate limit, on a public address
IPV6_CLIENT_PREFIX = 64  # one IPv6 client holds a /64: its addresses are one client


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or address to listen on) reaches this machine only."""
    name = host_name(host)
    if name is None:
        return False
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Security:
    """The effective security settings of one ``scout serve`` (config and ``--host``)."""

    host: str
    api_keys_env: str | None
    api_keys: frozenset[str] | None
    maintainer_keys: frozenset[str] | None
    open: bool
    allowed_hosts: frozenset[str]  # Host header names served (loopback names always)
    named_hosts: frozenset[str]  # allowed_hosts: an Origin on one of these is the page's own
    proxies: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]
    cors_origins: frozenset[str]

    @classmethod
    def of(cls, config: Config, host: str | None = None) -> Security:
        serve = config.serve
        listening = host if host is not None else serve.host
        named = {h for h in (host_name(listening), *serve.allowed_hosts) if h}
        named -= WILDCARD_HOSTS
        return cls(
            host=listening,
            api_keys_env=serve.api_keys_env,
            api_keys=serve.keys("api_keys_env"),
            maintainer_keys=serve.keys("maintainer_keys_env"),
            open=serve.open,
            allowed_hosts=frozenset(named | LOOPBACK_NAMES),
            named_hosts=frozenset(serve.allowed_hosts),
            proxies=tuple(ipaddress.ip_network(p) for p in serve.trusted_proxies),
            cors_origins=frozenset(serve.cors_origins),
        )

    # -- who is asking

    def client_address(self, peer: str | None, forwarded_for: str | None) -> str:
        """The client's address as the rate limit counts it: the peer, or, when the peer is a
        trusted proxy, the last address in ``X-Forwarded-For`` that is not a trusted proxy."""
        address = _ip(peer)
        if address is None:
            return peer or "unknown"
        if forwarded_for and self._trusted(address):
            entries = forwarded_for.split(",")[-MAX_FORWARDED:]
            for entry in reversed(entries):
                forwarded = _ip(entry.strip())
                if forwarded is None:
                    break  # a proxy sends addresses: anything else ends what can be believed
                address = forwarded
                if not self._trusted(forwarded):
                    break
        if address.version == 6:
            network = ipaddress.ip_network(f"{address}/{IPV6_CLIENT_PREFIX}", strict=False)
            return str(network)
        return str(address)

    def untrusted_forwarder(self, peer: str | None, forwarded_for: str | None) -> bool:
        """Whether a peer that is no trusted proxy sends X-Forwarded-For (a proxy left out of
        ``trusted_proxies``, or a client trying its luck)."""
        address = _ip(peer)
        return bool(forwarded_for) and address is not None and not self._trusted(address)

    def _trusted(self, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        return any(address in network for network in self.proxies)

    # -- where the request is addressed, and where it comes from

    def host_allowed(self, host_header: str | None) -> bool:
        """Whether the ``Host`` header names this server (a missing one does not)."""
        name = _host_of(host_header or "")
        return name is not None and name in self.allowed_hosts

    def origin_allowed(self, headers: Mapping[str, str]) -> bool:
        """Whether a POST comes from the page's own origin, a listed CORS origin, or no browser:
        ``Origin`` when sent, else ``Sec-Fetch-Site`` (only ``cross-site`` is refused)."""
        origin = headers.get("origin")
        site = headers.get("sec-fetch-site", "").strip().lower()
        if origin is None:
            return site != "cross-site"
        origin = origin.strip()
        if origin == "null":
            # a browser that withholds the origin (a no-referrer policy) still says whose page
            # sent the request; a sandboxed frame or a file says cross-site, or nothing
            return site == "same-origin"
        if origin.rstrip("/") in self.cors_origins:
            return True
        try:
            parts = urlsplit(origin)
            parts.port  # noqa: B018 - raises ValueError for a port that is not one
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False  # "null" (a sandboxed frame, a file) is nobody's page
        name = host_name(parts.hostname)
        if name in self.named_hosts:
            return True
        # the same origin: the page was served under the very Host this request names
        host = headers.get("host", "")
        return _netloc(parts.netloc, parts.scheme) == _netloc(host, parts.scheme)

    # -- is it safe

    def public(self) -> bool:
        """Whether the server listens on an address other than loopback."""
        return not is_loopback(self.host)

    def refusal(self) -> str | None:
        """Why ``scout serve`` must not start (keys that would fail open), or None."""
        if self.open or self.api_keys is not None:
            return None
        if self.api_keys_env is not None:
            return (
                f"serve.api_keys_env names {self.api_keys_env}, which holds no key (unset, "
                "empty or only commas): set it, or set serve.open = true if the server is meant "
                "to need no key"
            )
        if self.public():
            return (
                f"serving on {self.host} with no API keys: set serve.api_keys_env, or set "
                "serve.open = true if the server is meant to need no key"
            )
        return None

    def findings(self) -> list[tuple[str, str]]:
        """What ``--check`` reports beyond the settings: ``("unsafe", text)`` for what stops the
        server or exposes it on an address other than loopback, ``("note", text)`` otherwise."""
        found: list[tuple[str, str]] = []
        refusal = self.refusal()
        if refusal is not None:
            found.append(("unsafe", refusal))
        public = self.public()
        weak = [k for k in self.api_keys or () if len(k) < MIN_KEY_CHARS]
        weak += [k for k in self.maintainer_keys or () if len(k) < MIN_KEY_CHARS]
        if weak and public:
            found.append(("unsafe", f"{len(weak)} key(s) shorter than {MIN_KEY_CHARS} characters"))
        if any(network.prefixlen == 0 for network in self.proxies):
            found.append(
                (
                    "unsafe",
                    "trusted_proxies trusts every address: any client can claim any "
                    "address in X-Forwarded-For",
                )  # fmt: skip
            )
        if self.host in WILDCARD_HOSTS and not self.named_hosts:
            found.append(
                (
                    "note",
                    f"listening on {self.host or 'every address'} with no allowed_hosts: "
                    "only loopback names are served (421 for the rest)",
                )  # fmt: skip
            )
        if not public and not self.proxies and self.api_keys is None:
            found.append(
                (
                    "note",
                    "no trusted_proxies: behind a reverse proxy every client is the proxy's "
                    "address, with one rate limit and one client's answer slots",
                )  # fmt: skip
            )
        if self.open and self.api_keys is None and public:
            found.append(("note", f"open: anyone who can reach {self.host} asks, without a key"))
        return found

    def summary(self) -> dict[str, object]:
        """The effective settings, for ``--check`` (never a key: how many there are)."""
        return {
            "host": self.host,
            "loopback": not self.public(),
            "api_keys_env": self.api_keys_env,
            "api_keys": len(self.api_keys) if self.api_keys is not None else 0,
            "maintainer_keys": len(self.maintainer_keys) if self.maintainer_keys else 0,
            "open": self.open,
            "allowed_hosts": sorted(self.allowed_hosts),
            "trusted_proxies": [str(network) for network in self.proxies],
            "cors_origins": sorted(self.cors_origins),
        }


def refuse_unsafe_start(security: Security, source: object) -> None:
    """ConfigError (exit 3) when ``scout serve`` must not start: keys that would fail open."""
    refusal = security.refusal()
    if refusal is not None:
        raise ConfigError(f"{source}: {refusal}")


def _ip(text: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if not text or len(text) > 64:
        return None
    try:
        address = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _host_of(header: str) -> str | None:
    """The host name of a ``Host`` header (``name``, ``name:port``, ``[v6]:port``)."""
    text = header.strip()
    if len(text) > 300:
        return None
    if text.startswith("["):
        inside, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return None
        return host_name(inside)
    name, colon, port = text.partition(":")
    if colon and not port.isdigit():
        return None
    return host_name(name)


def _netloc(host: str, scheme: str) -> tuple[str | None, str]:
    """A host and port as an origin compares them (the scheme's default port made explicit)."""
    text = host.strip().lower()
    name = _host_of(text)
    _, _, port = text.rpartition(":") if not text.endswith("]") else ("", "", "")
    default = "443" if scheme == "https" else "80"
    return name, port if port.isdigit() else default
