"""The management page: three static files (HTML, JavaScript, CSS) served by the app.

No build step: ``page/index.html`` loads ``/page/app.js``, which talks to the same ``/me``
API with the token the person types (kept in ``sessionStorage``). The page is served with a
strict Content-Security-Policy: scripts, styles and requests from this origin only, no
inline script, no framing.
"""

from __future__ import annotations

from importlib import resources

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["CSP", "page_routes"]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/page/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/page/style.css": ("style.css", "text/css; charset=utf-8"),
}
_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}


def page_routes() -> list[Route]:
    """GET routes for the page's files (read once, when the app is built)."""
    folder = resources.files("memrecall.http") / "page"
    routes = []
    for path, (name, media_type) in _FILES.items():
        body = (folder / name).read_bytes()

        async def endpoint(
            _: Request, body: bytes = body, media_type: str = media_type
        ) -> Response:
            return Response(body, 200, _HEADERS, media_type=media_type)

        routes.append(Route(path, endpoint, methods=["GET"]))
    return routes
