"""The viewer admits only its user: a viser server (:func:`guarded_server`) whose every HTTP request and websocket
handshake is checked before viser sees it (:class:`ServerGuard`).

* ``Host`` must name the server's own port on a loopback name (127.0.0.1, localhost, [::1]) or the address given
  with ``--host``; a foreign Host (a DNS-rebinding page) gets 403.
* ``Origin``, when the client sends one (a browser always does on a websocket), must be ``http://`` + that Host:
  a page of another site (a cross-site websocket) gets 403.
* A random token (:func:`secrets.token_urlsafe`, as Jupyter's) is in the printed URL: ``/?token=T``. A request
  carries it in its query or in the cookie ``kane-view-PORT`` that the page's first response sets (HttpOnly,
  SameSite=Strict; the viser client opens its websocket without the page's query, the cookie goes with it).
  Without it every request, the websocket included, gets 403: nothing is read and nothing is changed (the live
  model's drag, any GUI control) without the URL.

The hook: viser 1.1 builds its server with ``websockets.asyncio.server.serve(..., process_request=its file
server)`` in its own thread and exposes no option for it, so :func:`guarded_server` wraps that ``serve`` (once,
for the process): a serve call made by viser while a kane viewer is being built gets the guard in front of viser's
``process_request``; every other call is passed through unchanged. The guard is in place before the server
accepts its first connection. Viewers are built one at a time (a lock); a viser server that another thread builds
meanwhile outside kane would get the same guard (refused without the token: it fails closed, never open).
"""

from __future__ import annotations

import ipaddress
import secrets
import threading
from http import HTTPStatus
from typing import NamedTuple
from urllib.parse import parse_qs, urlsplit

__all__ = ["LOOPBACK_NAMES", "GuardedServer", "ServerGuard", "guarded_server", "is_loopback"]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
_WILDCARDS = ("", "0.0.0.0", "::")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or address to listen on) stays on this machine."""
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _netloc(host: str) -> str:
    """``host`` as it is written before ``:PORT`` in a URL or a Host header ([::1] for an IPv6 address)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class ServerGuard:
    """The checks of one server listening on ``host``: :meth:`refusal` says why a request is refused (None: it
    is admitted); :meth:`wrap` puts them in front of a websockets ``process_request``. ``token`` is the secret of
    the printed URL."""

    def __init__(self, host: str, token: str | None = None):
        self.host = host
        self.token = token or secrets.token_urlsafe(32)
        names = {_netloc(n).lower() for n in LOOPBACK_NAMES}
        if host not in _WILDCARDS:
            names.add(_netloc(host).lower())
        self.names = frozenset(names)
        self.any_host = host in _WILDCARDS  # listening on every address: the machine's names are not known

    def cookie_name(self, port: int) -> str:
        """The cookie carrying the token for the server on ``port`` (cookies are shared by a host's ports)."""
        return f"kane-view-{port}"

    def _token_of(self, request, port: int) -> tuple[str | None, bool]:
        """(the token the request carries, whether it came in the URL's query)."""
        query = parse_qs(urlsplit(request.path).query).get("token")
        if query:
            return query[0], True
        for header in request.headers.get_all("Cookie"):
            for part in header.split(";"):
                name, _, value = part.strip().partition("=")
                if name == self.cookie_name(port):
                    return value, False
        return None, False

    def refusal(self, request, port: int) -> str | None:
        """Why ``request`` (a websockets ``Request``) to the server on ``port`` is refused; None when admitted."""
        hosts = request.headers.get_all("Host")
        if len(hosts) != 1:
            return "one Host header is expected"
        host = hosts[0].strip().lower()
        name, sep, given = host.rpartition(":")
        if not sep or given != str(port) or not (self.any_host or name in self.names):
            return f"Host {host!r} is not this viewer ({', '.join(sorted(f'{n}:{port}' for n in self.names))})"
        origins = request.headers.get_all("Origin")
        if len(origins) > 1 or (origins and origins[0].strip().lower() != f"http://{host}"):
            return f"Origin {origins[0]!r} is not this viewer's page (http://{host})"
        token, _ = self._token_of(request, port)
        if token is None or not secrets.compare_digest(token.encode(), self.token.encode()):
            return "the viewer's token is missing or wrong: open the URL kane printed, with its ?token="
        return None

    def wrap(self, process_request):
        """A websockets ``process_request`` that refuses with 403 what :meth:`refusal` refuses and passes the
        rest to ``process_request`` (viser's file server; None: the handshake goes on); the response to a
        request whose URL carries the token sets the token's cookie."""

        def guarded(connection, request):
            port = connection.local_address[1]
            why = self.refusal(request, port)
            if why is not None:
                return connection.respond(HTTPStatus.FORBIDDEN, f"kane view: refused: {why}\n")
            response = process_request(connection, request) if process_request is not None else None
            if response is not None and self._token_of(request, port)[1]:
                response.headers["Set-Cookie"] = (f"{self.cookie_name(port)}={self.token}; Path=/; HttpOnly; "
                                                  "SameSite=Strict")
            return response

        return guarded


class GuardedServer(NamedTuple):
    """A started viser ``server`` behind its ``guard``, listening on ``port``; ``url`` (with the token) is the
    address to open."""

    server: object
    guard: ServerGuard
    port: int
    url: str


_BUILD_LOCK = threading.Lock()
_building: dict = {}  # "guard": the ServerGuard of the viewer being built (read in viser's server thread)
_original_serve: list = []


def _is_viser_handler(handler) -> bool:
    return "WebsockServer._background_worker" in getattr(handler, "__qualname__", "")


def _serve(handler, *args, process_request=None, **kwargs):
    """websockets' ``serve``, with the guard of the viewer being built in front of viser's ``process_request``."""
    guard = _building.get("guard") if _is_viser_handler(handler) else None
    if guard is not None:
        process_request = guard.wrap(process_request)
        _building["served"] = True
    return _original_serve[0](handler, *args, process_request=process_request, **kwargs)


def _install() -> None:
    import websockets.asyncio.server as ws_server

    if not _original_serve:
        _original_serve.append(ws_server.serve)
        ws_server.serve = _serve


def guarded_server(host: str, port: int) -> GuardedServer:
    """A viser server on ``host`` (loopback unless the user asked otherwise) and ``port`` (the next free one when
    it is taken; 0: any free port), every request checked by a new :class:`ServerGuard` from its first."""
    import viser

    from ..errors import KaneError

    guard = ServerGuard(host)
    with _BUILD_LOCK:
        _install()
        _building.update(guard=guard, served=False)
        try:
            server = viser.ViserServer(host=host, port=port, verbose=False)
            served = _building["served"]
        finally:
            _building.clear()
    if not served:
        server.stop()
        raise KaneError("kane view: the viser server was not started through websockets' serve; the viewer "
                        "cannot check who connects to it (is the installed viser 1.1?)")
    bound = server.get_port()
    shown = _netloc("127.0.0.1" if host in _WILDCARDS else host)
    return GuardedServer(server, guard, bound, f"http://{shown}:{bound}/?token={guard.token}")
