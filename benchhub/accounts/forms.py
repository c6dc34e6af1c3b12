"""Sign-in forms with the failed-sign-in rate limits (accounts.ratelimit), for the site's sign-in
page and the admin's; the form that makes a personal token on the Tokens page."""

from datetime import datetime, timedelta

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.utils import timezone

from benchhub.accounts import ratelimit
from benchhub.accounts.models import PersonalToken
from benchhub.accounts.services import DEFAULT_TOKEN_DAYS, MAX_TOKEN_DAYS


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


# The lifetimes the Tokens page offers, in days; none beyond what the service allows.
TOKEN_DAYS = (7, 30, DEFAULT_TOKEN_DAYS, MAX_TOKEN_DAYS)
SCOPE_HELP = {
    PersonalToken.Scope.READ: "read runs, comparisons and jobs",
    PersonalToken.Scope.IMPORT: "upload runs (imports)",
    PersonalToken.Scope.QUEUE: "queue jobs, schedules, recipes and review",
}


class PersonalTokenForm(forms.Form):
    """A personal token's name, scopes and lifetime, as the API's POST /api/v1/tokens/ takes
    them: at least one scope, at most MAX_TOKEN_DAYS."""

    name = forms.CharField(max_length=100, strip=True)
    scopes = forms.MultipleChoiceField(
        choices=[(scope, f"{scope}: {SCOPE_HELP[scope]}") for scope in PersonalToken.Scope],
        initial=[PersonalToken.Scope.READ],
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one scope."},
    )
    days = forms.TypedChoiceField(
        choices=[(days, f"{days} days") for days in TOKEN_DAYS],
        coerce=int,
        initial=DEFAULT_TOKEN_DAYS,
        label="Expires after",
    )

    def expires_at(self) -> datetime:
        return timezone.now() + timedelta(days=self.cleaned_data["days"])
