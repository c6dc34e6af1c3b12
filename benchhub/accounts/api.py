"""Personal API tokens: people create, list and revoke their own tokens for scripts."""

from datetime import datetime, timedelta

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchhub.accounts.models import PersonalToken
from benchhub.accounts.selectors import personal_token_get, personal_token_list
from benchhub.accounts.services import (
    MAX_TOKEN_DAYS,
    personal_token_create,
    personal_token_revoke,
)
from benchhub.api.errors import error_response
from benchhub.api.fields import StrictCharField
from benchhub.api.permissions import NOT_FOR_TOKENS, IsPerson, request_person
from benchhub.api.serializers import InSerializer


class TokenInSerializer(InSerializer):
    name = StrictCharField(max_length=100)
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=PersonalToken.Scope.choices),
        min_length=1,
        max_length=3,
        default=[PersonalToken.Scope.READ],
        help_text="read; import (upload runs); queue (jobs, schedules, review). Default read.",
    )
    expires_at = serializers.DateTimeField(
        required=False, allow_null=True, help_text="at most a year ahead; default 90 days"
    )

    def validate_scopes(self, value: list[str]) -> list[str]:
        return sorted(set(value))

    def validate_expires_at(self, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        now = timezone.now()
        if value <= now:
            raise serializers.ValidationError("The expiry must be in the future.")
        if value > now + timedelta(days=MAX_TOKEN_DAYS):
            raise serializers.ValidationError(f"A token lives at most {MAX_TOKEN_DAYS} days.")
        return value


class TokenOutSerializer(serializers.ModelSerializer):
    class Meta:
        model = PersonalToken
        fields = [
            "name",
            "prefix",
            "scopes",
            "created_at",
            "expires_at",
            "revoked_at",
            "last_used_at",
        ]


class TokensView(APIView):
    permission_classes = [IsPerson]
    token_scopes = {"POST": NOT_FOR_TOKENS}

    @extend_schema(responses=TokenOutSerializer(many=True))
    def get(self, request: Request) -> Response:
        tokens = personal_token_list(user=request_person(request))
        return Response(TokenOutSerializer(tokens, many=True).data)

    @extend_schema(request=TokenInSerializer, responses={201: TokenOutSerializer})
    def post(self, request: Request) -> Response:
        data = TokenInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        token, plaintext = personal_token_create(
            user=request_person(request), **data.validated_data
        )
        body = {**TokenOutSerializer(token).data, "token": plaintext}
        return Response(body, status=status.HTTP_201_CREATED)


class TokenDetailView(APIView):
    permission_classes = [IsPerson]
    token_scopes = {"DELETE": NOT_FOR_TOKENS}

    @extend_schema(responses={204: None})
    def delete(self, request: Request, prefix: str) -> Response:
        token = personal_token_get(user=request_person(request), prefix=prefix)
        if token is None:
            return error_response("not_found", f"No token {prefix}.", status.HTTP_404_NOT_FOUND)
        personal_token_revoke(token=token)
        return Response(status=status.HTTP_204_NO_CONTENT)
