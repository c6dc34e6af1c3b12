"""Sign-in forms with the failed-sign-in rate limits (accounts.ratelimit), for the site's sign-in
page and the admin's."""

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm

from benchhub.accounts import ratelimit


class RateLimitedAuthenticationForm(AuthenticationForm):
    """Refuse a sign-in, before its password is hashed, once its username from this client
    address, or the address itself, has used up the window's failures; count each failure
    against both.

    The tighter limit is per username *and* address: a limit per username alone let anyone
    lock any account out by failing its sign-in from anywhere, while its owner, signing in from
    their own address, is never counted with a guesser's failures."""

    def clean(self) -> dict:
        username = self.data.get("username", "")
        ip = ratelimit.client_ip(self.request) if self.request else "unknown"
        limits = [
            (ratelimit.login_user_limit(), f"{username}@{ip}"),
            (ratelimit.login_ip_limit(), ip),
        ]
        try:
            for limit, ident in limits:
                ratelimit.ratelimit_check(limit=limit, ident=ident)
        except ratelimit.RateLimited as exc:
            raise _too_many(exc) from None
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            try:
                for limit, ident in limits:
                    ratelimit.ratelimit_fail(limit=limit, ident=ident)
            except ratelimit.RateLimited as exc:
                raise _too_many(exc) from None
            raise
        ratelimit.ratelimit_reset(limit=limits[0][0], ident=limits[0][1])
        return cleaned


def _too_many(exc: ratelimit.RateLimited) -> forms.ValidationError:
    minutes = max(1, round(exc.retry_after / 60))
    return forms.ValidationError(
        "Too many failed sign-ins. Try again in %(minutes)d minute(s).",
        code="rate_limited",
        params={"minutes": minutes},
    )


class LoginForm(RateLimitedAuthenticationForm):
    pass


class AdminLoginForm(RateLimitedAuthenticationForm, AdminAuthenticationForm):
    pass
