"""Builds API: the PostgreSQL versions in the repository, in version order; build recipes and
their patches (docs/runner-api.md, "Build recipes")."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchhub.api.errors import error_response
from benchhub.api.fields import StrictCharField
from benchhub.api.permissions import IsPersonOrReadOnly, WriteRuleOrReadOnly, request_person
from benchhub.api.serializers import InSerializer
from benchhub.builds import services
from benchhub.builds.models import Build, Patch, Recipe
from benchhub.builds.selectors import build_list, can_define_recipes, recipe_get, recipe_list
from benchhub.builds.specs import recipe_source

MAX_INLINE_PATCH_CHARS = services.MAX_RECIPE_PATCH_BYTES


# Defining a recipe takes staff or the builds.add_recipe permission; with a personal token,
# within its scopes (defining a recipe is a write: `queue`), as every other write is.
RECIPE_REFUSAL = "Defining recipes takes staff status or the builds.add_recipe permission."


class BuildOutSerializer(serializers.ModelSerializer):
    recipe = serializers.CharField(source="recipe.name", allow_null=True, default=None)

    class Meta:
        model = Build
        fields = [
            "version",
            "major",
            "minor",
            "stage",
            "stage_number",
            "snapshot_date",
            "commit",
            "configure_flags",
            "origin",
            "input_key",
            "recipe",
        ]


class BuildsView(APIView):
    @extend_schema(responses=BuildOutSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(BuildOutSerializer(build_list(), many=True).data)


# --- recipes ---------------------------------------------------------------------------------


class PatchInlineInSerializer(InSerializer):
    name = StrictCharField(max_length=100)
    text = StrictCharField(max_length=MAX_INLINE_PATCH_CHARS)


class RecipeInSerializer(InSerializer):
    name = StrictCharField(max_length=100)
    base = StrictCharField(max_length=100, required=False, allow_blank=True, default="")
    description = StrictCharField(max_length=2000, required=False, allow_blank=True, default="")
    source = serializers.DictField(  # type: ignore[assignment]
        help_text='{"kind": "release", "version": "15.18"} | {"kind": "tarball", "url" or '
        '"path", "sha256"} | {"kind": "git", "url", "ref"} | {"kind": "git", "url", "branch", '
        '"date"}'
    )
    configure_flags = serializers.ListField(
        child=StrictCharField(max_length=300), required=False, default=list, max_length=50
    )
    cflags = StrictCharField(max_length=1000, required=False, allow_blank=True, default="")
    contrib = serializers.ListField(
        child=StrictCharField(max_length=63), required=False, default=list, max_length=60
    )
    patches = serializers.ListField(
        child=PatchInlineInSerializer(), required=False, default=list, max_length=50
    )


class PatchOutSerializer(serializers.ModelSerializer):
    class Meta:
        model = Patch
        fields = ["position", "name", "sha256", "size", "uploaded_at"]


class RecipeOutSerializer(serializers.ModelSerializer):
    source = serializers.SerializerMethodField()  # type: ignore[assignment]
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    patches = PatchOutSerializer(many=True, read_only=True)
    url = serializers.SerializerMethodField()

    class Meta:
        model = Recipe
        fields = [
            "name",
            "url",
            "base",
            "description",
            "source",
            "configure_flags",
            "cflags",
            "contrib",
            "patches",
            "created_by",
            "created_at",
        ]

    def get_source(self, recipe: Recipe) -> dict[str, Any]:
        return recipe_source(recipe)

    def get_url(self, recipe: Recipe) -> str:
        return f"/api/v1/recipes/{recipe.name}/"


class RecipesView(APIView):
    permission_classes = [WriteRuleOrReadOnly]
    write_rule = staticmethod(can_define_recipes)
    write_refusal = RECIPE_REFUSAL

    @extend_schema(responses=RecipeOutSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(RecipeOutSerializer(recipe_list(), many=True).data)

    @extend_schema(request=RecipeInSerializer, responses={201: RecipeOutSerializer})
    def post(self, request: Request) -> Response:
        data = RecipeInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        patches = [
            services.PatchIn(name=p["name"], content=p["text"].encode("utf-8", "surrogatepass"))
            for p in values.pop("patches")
        ]
        recipe = services.recipe_create(
            **values, patches=patches, created_by=request_person(request)
        )
        return Response(
            RecipeOutSerializer(recipe_get(name=recipe.name)).data, status=status.HTTP_201_CREATED
        )


class RecipeDetailView(APIView):
    permission_classes = [IsPersonOrReadOnly]

    @extend_schema(responses=RecipeOutSerializer)
    def get(self, request: Request, name: str) -> Response:
        recipe = recipe_get(name=name)
        if recipe is None:
            return error_response("not_found", f"No recipe named {name}.", 404)
        return Response(RecipeOutSerializer(recipe).data)


class PatchUploadInSerializer(InSerializer):
    file = serializers.FileField(
        max_length=100, allow_empty_file=False, help_text="the patch (multipart upload)"
    )
    name = StrictCharField(
        max_length=100, required=False, allow_blank=True, default="", help_text="default: file's"
    )


class RecipePatchesView(APIView):
    """Append a patch to a recipe: multipart `file` (and an optional `name`), applied after
    the patches it has."""

    permission_classes = [WriteRuleOrReadOnly]
    write_rule = staticmethod(can_define_recipes)
    write_refusal = RECIPE_REFUSAL
    parser_classes = [MultiPartParser, JSONParser]

    @extend_schema(request=PatchUploadInSerializer, responses={201: RecipeOutSerializer})
    def post(self, request: Request, name: str) -> Response:
        recipe = recipe_get(name=name)
        if recipe is None:
            return error_response("not_found", f"No recipe named {name}.", 404)
        data = PatchUploadInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        if upload.size > services.MAX_RECIPE_PATCH_BYTES:
            return error_response(
                "invalid",
                "The patch is too large.",
                400,
                {"file": [f"At most {services.MAX_RECIPE_PATCH_BYTES} bytes."]},
            )
        patch = services.PatchIn(
            name=data.validated_data["name"] or upload.name, content=upload.read()
        )
        services.recipe_patch_add(recipe=recipe, patch=patch, uploaded_by=request_person(request))
        return Response(
            RecipeOutSerializer(recipe_get(name=recipe.name)).data, status=status.HTTP_201_CREATED
        )
