"""Security headers on every response: Content-Security-Policy and Permissions-Policy.

Django's SecurityMiddleware and XFrameOptionsMiddleware already send nosniff, Referrer-Policy,
Cross-Origin-Opener-Policy, X-Frame-Options and (behind TLS) HSTS; this adds the rest.

The policy allows only this origin for scripts, styles, images, fonts and requests. Pages hand
data to their script in `json_script` blocks (type application/json, which CSP does not run), so
no inline script is needed anywhere: not on our pages, not in the admin, not in the API docs
(SpectacularSwaggerSplitView serves its start-up script as a file). The exceptions, each needed:
- style-src-elem 'unsafe-inline': plotly.js puts its CSS rules (modebar, hover labels) in a
  <style> element it creates at run time; with style-src 'self' alone Chromium reports a
  style-src-elem violation on every chart page and the toolbar loses its styling. Only <style>
  elements get the exception: style="" attributes stay refused (style-src-attr falls back to
  style-src 'self'), and inline style cannot run code; scripts stay strictly 'self', with no
  'unsafe-eval' (plotly.js 3 needs none).
- img-src data: blob:: plotly's "Download plot as a PNG" renders the chart into a data: image,
  and the admin and Swagger UI use data: SVG icons.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "style-src-elem 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
PERMISSIONS_POLICY = ", ".join(
    f"{feature}=()"
    for feature in (
        "camera",
        "microphone",
        "geolocation",
        "payment",
        "usb",
        "serial",
        "bluetooth",
        "accelerometer",
        "gyroscope",
        "magnetometer",
        "display-capture",
        "interest-cohort",
    )
)


class SecurityHeadersMiddleware:
    """Add the Content-Security-Policy and Permissions-Policy headers unless a view set its own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        return response
