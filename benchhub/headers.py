"""Security headers on every response: Content-Security-Policy and Permissions-Policy.

Django's SecurityMiddleware and XFrameOptionsMiddleware already send nosniff, Referrer-Policy,
Cross-Origin-Opener-Policy, X-Frame-Options and (behind TLS) HSTS; this adds the rest.

The policy allows only this origin for scripts, styles, images, fonts and requests. Pages hand
data to their script in `json_script` blocks (type application/json, which CSP does not run), so
no inline script is needed anywhere: not on our pages, not in the admin, not in the API docs
(SpectacularSwaggerSplitView serves its start-up script as a file). Styles are files too:
plotly.js would put its CSS rules (modebar, hover labels) in a <style> element it creates, but
skips that when the page has an element with its id and the class "no-inline-styles", which
frontend/templates/_plotly.html adds as the <link> of the same rules (plotly.css). Scripts stay
strictly 'self', with no 'unsafe-eval' (plotly.js needs none). The exceptions, each needed:
- style-src-attr 'unsafe-hashes' with the hash of an empty string: plotly.js clears the
  style="" of a colorbar's rectangles (the flame graph's difference) with setAttribute before
  it sets their fill through the CSSOM (which CSP does not govern); Chromium reports each such
  call as a violation. This allows style="" and no other style attribute.
- img-src data: blob:: plotly's "Download plot as a PNG" renders the chart into a data: image,
  and the admin and Swagger UI use data: SVG icons.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

# The hash of an empty style attribute (sha256 of no bytes): the only one the policy allows.
EMPTY_STYLE = "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        f"style-src-attr 'unsafe-hashes' '{EMPTY_STYLE}'",
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
