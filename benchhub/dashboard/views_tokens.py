"""The Tokens page: a signed-in person makes, lists and revokes their own personal tokens, the
bearer tokens that `benchhub` (the CLI) and scripts send to the API.

A new token's secret is in the answer to the POST that made it and nowhere else: it is stored
only as its digest (accounts.tokens), so the page cannot show it again, and it is not put in
the session to survive a redirect.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from benchhub.accounts.forms import PersonalTokenForm
from benchhub.accounts.selectors import personal_token_get, personal_token_list
from benchhub.accounts.services import personal_token_create, personal_token_revoke
from benchhub.dashboard.query import SignedInRequest


def _page(
    request: SignedInRequest, form: PersonalTokenForm, *, secret: str = "", status: int = 200
) -> HttpResponse:
    context = {
        "form": form,
        "secret": secret,
        "tokens": personal_token_list(user=request.user),
    }
    return render(request, "dashboard/tokens.html", context, status=status)


@never_cache
@login_required
def token_list(request: SignedInRequest) -> HttpResponse:
    """GET /account/tokens/: my tokens and the form for a new one; POST makes one and shows
    its secret, once."""
    if request.method != "POST":
        return _page(request, PersonalTokenForm())
    form = PersonalTokenForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    _, secret = personal_token_create(
        user=request.user,
        name=form.cleaned_data["name"],
        scopes=sorted(form.cleaned_data["scopes"]),
        expires_at=form.expires_at(),
    )
    return _page(request, PersonalTokenForm(), secret=secret, status=201)


@login_required
@require_POST
def token_revoke(request: SignedInRequest, prefix: str) -> HttpResponse:
    """POST /account/tokens/<prefix>/revoke/: the token is refused from the next request on.
    Someone else's token is not found, as one that does not exist."""
    token = personal_token_get(user=request.user, prefix=prefix)
    if token is None:
        raise Http404(f"No token {prefix}")
    personal_token_revoke(token=token)
    messages.success(request, f"Revoked {token.name} (bhp_{token.prefix}_…).")
    return redirect("tokens")
