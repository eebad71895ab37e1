"""The canonical URL that url_pattern is matched against (docs/formats.md, "Matching")."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}

_PCT_DOT = re.compile(r"%2e", re.IGNORECASE)


def remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4, with %2e read as a dot as browsers do."""
    if "." not in path and "%" not in path:
        return path
    if "%" not in path and path.startswith("/") and "/." not in path:
        return path  # dots inside names only (/static/app.js): no segment is . or ..
    if "%" in path:
        # Only whole segments of encoded dots are dot segments; decode just those.
        path = "/".join(
            _PCT_DOT.sub(".", s) if _PCT_DOT.sub(".", s) in (".", "..") else s
            for s in path.split("/")
        )
    segments = path.split("/")
    out: list[str] = []
    for seg in segments[1:] if path.startswith("/") else segments:
        if seg == ".":
            continue
        if seg == "..":
            if out:
                out.pop()
            continue
        out.append(seg)
    if segments[-1] in (".", ".."):
        out.append("")
    return "/" + "/".join(out)


_PCT_UNRESERVED = re.compile(r"%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[Dd]|2[Ee]|5[Ff]|7[Ee])")
_SLASHES = re.compile(r"//+")


def server_equivalent(url: str) -> str | None:
    """The canonical URL as common servers route it, when that differs: repeated slashes in the
    path merged (nginx's merge_slashes, Python's http.server) and percent-encoded unreserved
    characters decoded (RFC 3986 6.2.2.2: /%63heckout is /checkout); else None. Browsers never
    send such paths for a link they were given; a script can, by accident or not."""
    if not reads_otherwise(url):
        return None  # the common case, decided in two scans
    span = path_span(url)
    if span is None:
        return None
    start, end = span
    path = url[start:end]
    if "//" not in path and "%" not in path:
        return None
    new = _PCT_UNRESERVED.sub(lambda m: chr(int(m.group(0)[1:], 16)), path)
    new = remove_dot_segments(_SLASHES.sub("/", new))
    return None if new == path else url[:start] + new + url[end:]


def reads_otherwise(url: str) -> bool:
    """Whether servers may route an absolute URL to another path than it spells: only a '%' or a
    '//' besides the scheme's can make them (server_equivalent, decoded_separators)."""
    return "%" in url or url.count("//") > 1


def path_span(url: str) -> tuple[int, int] | None:
    """Where an absolute URL's path starts and ends (before its query or fragment); None when
    it has no path."""
    start = url.find("/", url.find("//") + 2)
    if start < 0:
        return None
    end = len(url)
    for stop in ("?", "#"):
        i = url.find(stop, start)
        if 0 <= i < end:
            end = i
    return start, end


def canonical_host(host: str) -> str:
    """Lower-case, IDNA-encode and strip the trailing dots of a host name (IP literals kept).

    Idempotent: whitespace left bare by a stripped dot ('shop\\r.') is stripped too, so a host
    canonicalised twice is the host canonicalised once."""
    host = host.strip()
    while host.endswith("."):
        host = host[:-1].rstrip()
    host = host.lower()
    if not host or host.startswith("[") or host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def split_authority(authority: str) -> tuple[str, int | None]:
    """'Host:8080' → ('Host', 8080); '[::1]:443' → ('[::1]', 443); a bad port → None."""
    authority = authority.strip()
    if "@" in authority:
        authority = authority.rsplit("@", 1)[1]
    if authority.startswith("["):
        end = authority.find("]")
        host, rest = authority[: end + 1], authority[end + 1 :]
        port_s = rest[1:] if rest.startswith(":") else ""
    elif authority.count(":") == 1:
        host, port_s = authority.split(":", 1)
    else:
        host, port_s = authority, ""
    if port_s.isdigit() and int(port_s) < 65536:
        return host, int(port_s)
    return host, None


def url_origin(scheme: str, host: str, port: int | None) -> str:
    """'scheme://host[:port]' of a canonical URL: the default port left out."""
    scheme = scheme.lower()
    host = canonical_host(host)
    netloc = host if port is None or DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    return f"{scheme}://{netloc}"


def url_path(target: str) -> str:
    """The path and raw query of a canonical URL, from a request target."""
    # A fragment ends the URL: anything after '#' (even a '?') is not path or query.
    if "#" in target:
        target = target.partition("#")[0]
    path, sep, query = target.partition("?")
    if "." in path or "%" in path:
        path = remove_dot_segments(path)
    if not path.startswith("/"):
        path = "/" + path  # an empty path too
    return f"{path}?{query}" if sep else path


def build_url(scheme: str, host: str, port: int | None, target: str) -> str:
    """Canonical URL from parts; target is the request path with its raw query."""
    return url_origin(scheme, host, port) + url_path(target)


def canonical_url(url: str, host_header: str | None = None) -> str:
    """Canonicalise an absolute URL string; a Host header, if given, names the host instead."""
    parts = urlsplit(url.strip())
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"not an absolute URL: {url!r}")
    host, port = split_authority(parts.netloc)
    target = parts.path + (f"?{parts.query}" if "?" in url.split("#", 1)[0] else "")
    return request_url(parts.scheme, host_header, host, port, target)


def request_url(
    scheme: str, host_header: str | None, host: str, port: int | None, target: str
) -> str:
    """The URL a proxied request is matched as: the host from Host/:authority, else the peer."""
    if host_header:
        h, p = split_authority(host_header)
        if h:
            return build_url(scheme, h, p, target)
    return build_url(scheme, host, port, target)


__all__ = [
    "DEFAULT_PORTS",
    "build_url",
    "canonical_host",
    "canonical_url",
    "path_span",
    "reads_otherwise",
    "remove_dot_segments",
    "request_url",
    "server_equivalent",
    "split_authority",
    "url_origin",
    "url_path",
]
