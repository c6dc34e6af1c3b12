"""The compare query parameters, shared by the page and the API, so a permalink means the same
thing in both: workload, host, versions (comma-separated, first = baseline unless a run is
marked baseline or `baseline` names a version) or runs (UUIDs), same_hardware, invalid, unlike
(runs that differ in what a set holds equal kept in it), the verdicts' practical threshold in
percent (default 2), the why section's level (why), and tag (review tags every compared run
carries, repeated or comma-separated)."""

import uuid
from typing import Any

from django.http import QueryDict
from rest_framework import serializers

from benchhub.api.fields import TagsParamField
from benchhub.compare.selectors.comparisons import MAX_COMPARED
from benchhub.stats.verdicts import DEFAULT_THRESHOLD

DEFAULT_THRESHOLD_PCT = DEFAULT_THRESHOLD * 100

LIST_PARAMS = ("versions", "runs", "tag")


def query_params(query: QueryDict) -> dict[str, Any]:
    """The query as one value per parameter; repeated list parameters (checkboxes submit
    `versions=a&versions=b`) are joined with commas like the permalink's."""
    params: dict[str, Any] = {key: query.get(key) for key in query}
    for key in LIST_PARAMS:
        values = [v for v in query.getlist(key) if v.strip()]
        if values:
            params[key] = ",".join(values)
    return params


def _split(text: str) -> list[str]:
    items: list[str] = []
    for part in text.split(","):
        part = part.strip()
        if part and part not in items:
            items.append(part)
    return items


class CompareQuerySerializer(serializers.Serializer):
    workload = serializers.CharField(required=False, max_length=200)
    host = serializers.CharField(required=False, max_length=200)
    versions = serializers.CharField(
        required=False, help_text="comma-separated; the first is the baseline"
    )
    runs = serializers.CharField(
        required=False, help_text="comma-separated run UUIDs; the first is the baseline"
    )
    same_hardware = serializers.BooleanField(
        required=False, default=False, help_text="any host with the host's hardware fingerprint"
    )
    invalid = serializers.BooleanField(
        required=False, default=False, help_text="include runs marked invalid"
    )
    unlike = serializers.BooleanField(
        required=False,
        default=False,
        help_text="keep in each version's set the runs that differ in what a set holds equal "
        "(pgbench client, threads, kernel, warm-up, host tuning); the verdicts then say they "
        "are not like with like",
    )
    baseline = serializers.CharField(
        required=False,
        max_length=100,
        help_text="the version compared against (default: the one whose run is marked "
        "baseline, else the first)",
    )
    threshold = serializers.FloatField(
        required=False,
        default=DEFAULT_THRESHOLD_PCT,
        min_value=0.1,
        max_value=50,
        help_text="percent: differences smaller than this count as the same (default 2)",
    )
    tag = TagsParamField(
        help_text="only runs carrying every one of these review tags enter the comparison "
        "(the runs standing for the versions and their sets): repeat the parameter or separate "
        "tags with commas"
    )
    why = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="the client level of the why section (default: the largest difference the "
        "verdicts trust, else the largest level compared)",
    )

    def validate_versions(self, value: str) -> list[str]:
        versions = _split(value)
        if len(versions) > MAX_COMPARED:
            raise serializers.ValidationError(f"At most {MAX_COMPARED} versions.")
        return versions

    def validate_runs(self, value: str) -> list[uuid.UUID]:
        runs = []
        for part in _split(value):
            try:
                runs.append(uuid.UUID(part))
            except ValueError:
                raise serializers.ValidationError(f"{part!r} is not a run UUID.") from None
        if len(runs) > MAX_COMPARED:
            raise serializers.ValidationError(f"At most {MAX_COMPARED} runs.")
        return runs

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("baseline") and attrs.get("versions") is not None:
            if attrs["baseline"] not in attrs["versions"]:
                raise serializers.ValidationError(
                    {"baseline": ["Must be one of the compared versions."]}
                )
        if attrs.get("runs"):
            return attrs
        missing = {
            name: ["Required unless runs is given."]
            for name in ("workload", "host", "versions")
            if not attrs.get(name)
        }
        if missing:
            raise serializers.ValidationError(missing)
        return attrs

    def selection(self) -> dict[str, Any]:
        """Keyword arguments for selectors.comparison_get."""
        data = self.validated_data
        return {
            "workload": data.get("workload"),
            "host": data.get("host"),
            "versions": data.get("versions") or [],
            "runs": data.get("runs") or [],
            "same_hardware": data["same_hardware"],
            "include_invalid": data["invalid"],
            "include_unlike": bool(data["unlike"]) and not data.get("runs"),
            "baseline": None if data.get("runs") else data.get("baseline") or None,
            "tags": data.get("tag") or [],
        }

    @property
    def why_level(self) -> int | None:
        """The why section's level asked for, or None for the one the verdicts pick."""
        return self.validated_data.get("why")

    @property
    def threshold_fraction(self) -> float:
        """The practical threshold as a fraction (0.02 for 2 %)."""
        return self.validated_data["threshold"] / 100


def permalink_query(data: dict[str, Any]) -> str:
    """The canonical permalink query for a validated selection."""
    from urllib.parse import urlencode

    if data.get("runs"):
        params: dict[str, str] = {"runs": ",".join(str(u) for u in data["runs"])}
    else:
        params = {
            "workload": data["workload"],
            "host": data["host"],
            "versions": ",".join(data["versions"]),
        }
        if data.get("same_hardware"):
            params["same_hardware"] = "1"
        if data.get("baseline"):
            params["baseline"] = data["baseline"]
        if data.get("unlike"):
            params["unlike"] = "1"
    if data.get("invalid"):
        params["invalid"] = "1"
    if data.get("tag"):
        params["tag"] = ",".join(data["tag"])
    if data.get("threshold", DEFAULT_THRESHOLD_PCT) != DEFAULT_THRESHOLD_PCT:
        params["threshold"] = f"{data['threshold']:g}"
    return urlencode(params, safe=",")
