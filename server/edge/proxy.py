"""The edge passes every request that is not engine.io's to the app, as it came.

Method, path, query, headers (cookies, CSRF, bearer tokens) and body go on unchanged over the
app's private Unix socket; the client's address and scheme go as ``X-Forwarded-For`` and
``X-Forwarded-Proto``, set here (a client's own are dropped), which the app trusts from that
socket alone (``server.cli.serve``). The answer comes back as the app gave it, streamed.
"""

from __future__ import annotations

import aiohttp
from aiohttp import web

# Hop-by-hop headers (RFC 9110 7.6.1) belong to one connection, not the request.
HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
}
FORWARDED = {"x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "forwarded"}
CHUNK = 1 << 16


class Proxy:
    def __init__(self, core: str, https: bool) -> None:
        self.core, self.scheme = core, "https" if https else "http"
        self._session: aiohttp.ClientSession | None = None

    def route(self, app: web.Application) -> None:
        app.router.add_route("*", "/{tail:(?s:.*)}", self.handle)  # every path, newlines too
        app.on_cleanup.append(self._close)

    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.UnixConnector(path=self.core, limit=0),
                timeout=aiohttp.ClientTimeout(total=None),
                auto_decompress=False,
                cookie_jar=aiohttp.DummyCookieJar(),
            )
        return self._session

    async def _close(self, app: web.Application) -> None:
        if self._session is not None:
            await self._session.close()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        headers = [
            (name, value)
            for name, value in request.headers.items()
            if name.lower() not in HOP | FORWARDED
        ]
        headers += [("X-Forwarded-For", request.remote or ""), ("X-Forwarded-Proto", self.scheme)]
        body = request.content.iter_chunked(CHUNK) if request.body_exists else None
        async with self.session().request(
            request.method,
            f"http://sluice{request.rel_url}",
            headers=headers,
            data=body,
            allow_redirects=False,
            skip_auto_headers={"Accept-Encoding", "User-Agent", "Content-Type"},
        ) as upstream:
            response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
            for name, value in upstream.headers.items():
                if name.lower() not in HOP:
                    response.headers.add(name, value)
            try:
                await response.prepare(request)
                async for chunk in upstream.content.iter_chunked(CHUNK):
                    await response.write(chunk)
                await response.write_eof()
            except ConnectionResetError:  # the client left before the answer was written
                pass
            return response
