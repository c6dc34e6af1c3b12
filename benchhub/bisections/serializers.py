"""Validation of bisection requests and of the range an agent lists; shapes of bisections as the
API returns them."""

import re
from typing import Any

from benchhub_runner.jobspec.plan import PLAN_SPECS
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from benchhub.api.fields import StrictCharField, StrictFloatField, StrictIntegerField
from benchhub.api.serializers import InSerializer
from benchhub.bisections.decide import ChangeError, given_change
from benchhub.bisections.models import BISECTION_PLAN_FIELDS, Bisection, BisectionCommit
from benchhub.bisections.origins import (
    ORIGIN_FIELDS,
    Origin,
    OriginError,
    origin_defaults,
    origin_get,
)
from benchhub.bisections.search import MAX_COMMITS
from benchhub.bisections.services import refs_check
from benchhub.builds.models import Recipe
from benchhub.jobs.serializers import JobInSerializer

SHA = re.compile(r"^[0-9a-f]{40}\Z")
MAX_PARENTS = 64
MAX_FILES = 100
# The fields of a bisection that are a job's, validated as a job request validates them.
JOB_FIELDS = ("workload", *BISECTION_PLAN_FIELDS, "host")


class BisectionInSerializer(InSerializer):
    """A bisection request. Started from two runs (`good_run`, `bad_run`) or a regression, the
    request needs nothing else: every field it leaves out comes from them (bisections.origins);
    otherwise recipe, good, bad, host, workload, clients and duration_s are required."""

    recipe = StrictCharField(max_length=100, required=False, help_text="a git recipe, by name")
    good = StrictCharField(
        max_length=200, required=False, help_text="a commit, tag or branch without the change"
    )
    bad = StrictCharField(max_length=200, required=False, help_text="one with it")
    host = StrictCharField(max_length=200, required=False)
    good_run = StrictCharField(
        max_length=40, required=False, help_text="start from two runs: the good one, by uuid"
    )
    bad_run = StrictCharField(max_length=40, required=False, help_text="and the bad one")
    regression = StrictIntegerField(
        min_value=1,
        max_value=2**63 - 1,
        required=False,
        help_text="start from a detected regression, by id",
    )
    workload = serializers.JSONField(
        required=False, help_text="as a job takes it (a catalog entry too)"
    )
    clients = StrictIntegerField(
        min_value=1,
        max_value=100000,
        required=False,
        help_text="the one level; from runs: where the change is largest",
    )
    repeats = StrictIntegerField(min_value=2, max_value=20, default=3, help_text="per step")
    max_repeats = StrictIntegerField(
        min_value=2, max_value=30, default=9, help_text="a commit unknown after these is skipped"
    )
    change = StrictFloatField(
        required=False,
        allow_null=True,
        default=None,
        help_text="bad / good in tps (0.92: 8% slower); null: measured from the two ends; "
        "from runs: theirs at the level",
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        # The plan fields pass through as given: JobInSerializer validates them (validate).
        plan = {
            name: serializers.JSONField(required=False, help_text=PLAN_SPECS[name].help or None)
            for name in BISECTION_PLAN_FIELDS
        }
        return {**super().get_fields(), **plan}

    def validate_change(self, value: float | None) -> float | None:
        if value is not None:
            try:
                given_change(value)
            except ChangeError as exc:
                raise serializers.ValidationError(str(exc)) from None
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        origin, defaults = self._origin(attrs)
        errors: dict[str, Any] = {}
        for name in ("recipe", "good", "bad", "host", "clients"):
            if name not in attrs and name in defaults:
                attrs[name] = defaults[name]
            if name not in attrs:
                errors[name] = "This field is required (or start from two runs or a regression)."
        if "change" not in self.initial_data and defaults:
            attrs["change"] = defaults.get("change")
        recipe = None
        if "recipe" in attrs:
            recipe = Recipe.objects.filter(name__iexact=attrs["recipe"].strip()).first()
            if recipe is None:
                errors["recipe"] = (
                    f"No recipe named {attrs['recipe']!r}; define it first (/recipes/)."
                )
            elif "good" in attrs and "bad" in attrs:
                errors.update(refs_check(recipe=recipe, good=attrs["good"], bad=attrs["bad"]))
        if attrs["max_repeats"] < attrs["repeats"]:
            errors["max_repeats"] = "At least the repeats of one step."
        request = {key: defaults[key] for key in JOB_FIELDS if key in defaults}
        request.update(
            {key: self.initial_data[key] for key in JOB_FIELDS if key in self.initial_data}
        )
        if "workload" not in request:
            errors["workload"] = "This field is required (or start from two runs or a regression)."
        request.update(clients=[attrs.get("clients", 1)], repeats=attrs["repeats"])
        request["versions"] = [recipe.name] if recipe is not None else ["master"]
        job = JobInSerializer(data=request)
        if not job.is_valid():
            errors.update({k: v for k, v in job.errors.items() if k not in ("versions", *errors)})
        elif job.validated_data.get("duration_s") is None:
            errors["duration_s"] = "A bisection measures for a duration (pgbench -T): give it."
        if errors:
            raise serializers.ValidationError(errors)
        return {**attrs, "recipe": recipe, "job": job.validated_data, "origin": origin}

    def _origin(self, attrs: dict[str, Any]) -> tuple[Origin | None, dict[str, Any]]:
        """The runs or regression the request starts from and the defaults they give."""
        named = {key: attrs.get(key) for key in ORIGIN_FIELDS}
        if not any(named.values()):
            return None, {}
        try:
            origin = origin_get(**named)
            return origin, origin_defaults(origin, clients=attrs.get("clients"))
        except OriginError as exc:
            raise serializers.ValidationError({exc.field: exc.message}) from None


class _Refused(Exception):
    """A part of a commit at fault: its path under `commits` and why."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")


def _text(value: Any, path: str, limit: int) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise _Refused(path, f"A string of at most {limit} characters.")
    return value


def _sha(value: Any, path: str) -> str:
    if not isinstance(value, str) or not SHA.match(value):
        raise _Refused(path, "A full commit id: 40 lowercase hex digits.")
    return value


def _list(value: Any, path: str, limit: int) -> list[Any]:
    if not isinstance(value, list) or len(value) > limit:
        raise _Refused(path, f"A list of at most {limit} items.")
    return value


def _commit(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Refused(path, "An object.")
    total = value.get("files_total", 0)
    if isinstance(total, bool) or not isinstance(total, int) or not 0 <= total < 2**31:
        raise _Refused(f"{path}.files_total", "An integer >= 0.")
    return {
        "sha": _sha(value.get("sha"), f"{path}.sha"),
        "parents": [
            _sha(p, f"{path}.parents[{i}]")
            for i, p in enumerate(_list(value.get("parents", []), f"{path}.parents", MAX_PARENTS))
        ],
        "author": _text(value.get("author", ""), f"{path}.author", 200),
        "date": _text(value.get("date", ""), f"{path}.date", 40),
        "subject": _text(value.get("subject", ""), f"{path}.subject", 200),
        "files": [
            _text(f, f"{path}.files[{i}]", 300)
            for i, f in enumerate(_list(value.get("files", []), f"{path}.files", MAX_FILES))
        ],
        "files_total": total,
    }


_SHA_SCHEMA = {"type": "string", "pattern": "^[0-9a-f]{40}$"}


@extend_schema_field(
    {
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_COMMITS,
        "items": {
            "type": "object",
            "required": ["sha"],
            "properties": {
                "sha": _SHA_SCHEMA,
                "parents": {"type": "array", "maxItems": 64, "items": _SHA_SCHEMA},
                "author": {"type": "string", "maxLength": 200},
                "date": {"type": "string", "maxLength": 40},
                "subject": {"type": "string", "maxLength": 200},
                "files": {
                    "type": "array",
                    "maxItems": 100,
                    "items": {"type": "string", "maxLength": 300},
                },
                "files_total": {"type": "integer", "minimum": 0, "maximum": 2**31 - 1},
            },
        },
    }
)
class RangeCommitsField(serializers.Field):
    """The commits of a range, newest first: at most MAX_COMMITS, each checked by hand (a
    nested serializer per commit is slow at thousands), errors named by path
    (`commits[12].parents[0]`)."""

    def to_internal_value(self, data: Any) -> list[dict[str, Any]]:
        if not isinstance(data, list) or not 1 <= len(data) <= MAX_COMMITS:
            raise serializers.ValidationError(f"A list of 1 to {MAX_COMMITS} commits.")
        commits = []
        try:
            commits = [_commit(value, f"[{i}]") for i, value in enumerate(data)]
        except _Refused as exc:
            raise serializers.ValidationError(str(exc)) from None
        if len({c["sha"] for c in commits}) != len(commits):
            raise serializers.ValidationError("A commit is listed twice.")
        return commits

    def to_representation(self, value: Any) -> Any:
        return value


class RangeInSerializer(InSerializer):
    attempt = StrictIntegerField(min_value=1, help_text="the attempt from the claim")
    good = StrictCharField(max_length=40, help_text="the good end, resolved: 40 hex")
    bad = StrictCharField(max_length=40, help_text="the bad end, resolved (the first commit)")
    commits = RangeCommitsField(
        help_text="newest first: sha, parents, author, date, subject, files (at most 100), "
        "files_total"
    )

    def validate_good(self, value: str) -> str:
        return _sha_field(value)

    def validate_bad(self, value: str) -> str:
        return _sha_field(value)


def _sha_field(value: str) -> str:
    if not SHA.match(value):
        raise serializers.ValidationError("A full commit id: 40 lowercase hex digits.")
    return value


class BisectionCommitOutSerializer(serializers.ModelSerializer):
    class Meta:
        model = BisectionCommit
        fields = [
            "position",
            "sha",
            "parents",
            "author",
            "date",
            "subject",
            "files",
            "files_total",
            "verdict",
            "tps",
            "position_value",
            "low",
            "high",
            "repeats",
            "step",
            "reason",
        ]


class BisectionOutSerializer(serializers.ModelSerializer):
    recipe = serializers.CharField(source="recipe.name")
    host = serializers.CharField(source="host.name")
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    good_run = serializers.UUIDField(source="good_run.uuid", allow_null=True, default=None)
    bad_run = serializers.UUIDField(source="bad_run.uuid", allow_null=True, default=None)
    regression = serializers.IntegerField(source="regression_id", allow_null=True)

    class Meta:
        model = Bisection
        fields = [
            "id",
            "state",
            "recipe",
            "good_ref",
            "bad_ref",
            "good_sha",
            "bad_sha",
            "good_run",
            "bad_run",
            "regression",
            "host",
            "workload",
            *BISECTION_PLAN_FIELDS,
            "clients",
            "repeats",
            "max_repeats",
            "change",
            "change_used",
            "good_tps",
            "culprit",
            "message",
            "created_by",
            "created_at",
            "finished_at",
        ]


class BisectionDetailOutSerializer(BisectionOutSerializer):
    commits = serializers.SerializerMethodField()
    jobs = serializers.SerializerMethodField()

    class Meta(BisectionOutSerializer.Meta):
        fields = [*BisectionOutSerializer.Meta.fields, "commits", "jobs"]

    def get_commits(self, bisection: Bisection) -> Any:
        """The commits measured so far, in the order tried (the bad end first)."""
        tried = [c for c in bisection.commits.all() if c.step is not None]
        tried.sort(key=lambda c: c.step or 0)
        return BisectionCommitOutSerializer(tried, many=True).data

    def get_jobs(self, bisection: Bisection) -> list[int]:
        return [job.pk for job in bisection.jobs.all()]
