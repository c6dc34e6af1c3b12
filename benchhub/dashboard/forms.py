"""HTML forms. They collect input; validation is the API's (jobs.serializers), so a job queued
from the page and one queued through the API obey the same rules."""

from typing import Any

from django import forms
from django.db import models

from benchhub.hosts.selectors import host_list
from benchhub.jobs.models import Job
from benchhub.workloads.models import Workload


def _numbers(text: str) -> list[int]:
    return [int(part) for part in text.replace(",", " ").split() if part.strip()]


def _as_named(choices: type[models.TextChoices]) -> list[tuple[str, str]]:
    """pgbench's own spelling (select-only, prepared) rather than Django's "Select Only"."""
    return [(value, value) for value in choices.values]


def _host_choices() -> list[tuple[str, str]]:
    return [("", "any host"), *((host.name, host.name) for host in host_list())]


class JobForm(forms.Form):
    versions = forms.CharField(
        help_text="space-separated, e.g. 13 14 or 13.3 14beta1; the first is the baseline",
        widget=forms.TextInput(attrs={"placeholder": "13 14", "autofocus": True}),
    )
    builtin = forms.ChoiceField(
        choices=_as_named(Workload.Builtin), initial="select-only", label="Workload"
    )
    query_mode = forms.ChoiceField(choices=_as_named(Workload.QueryMode), initial="prepared")
    scale = forms.IntegerField(min_value=1, initial=1, help_text="pgbench -s")
    clients = forms.CharField(initial="1 2 4 8 16 32", help_text="client levels, pgbench -c")
    duration_s = forms.FloatField(
        min_value=1, initial=10, label="Duration (s)", help_text="per level and repeat, pgbench -T"
    )
    repeats = forms.IntegerField(min_value=1, max_value=100, initial=3)
    order = forms.ChoiceField(choices=Job.Order.choices, initial=Job.Order.INTERLEAVED)
    host = forms.ChoiceField(choices=_host_choices, required=False)
    settings = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "shared_buffers = '1GB'"}),
        help_text="postgresql.conf overrides, one name = value per line",
    )
    priority = forms.IntegerField(initial=0, help_text="higher runs first")

    def clean_clients(self) -> list[int]:
        try:
            return _numbers(self.cleaned_data["clients"])
        except ValueError:
            raise forms.ValidationError("Client levels are whole numbers.") from None

    def clean_settings(self) -> dict[str, str]:
        overrides = {}
        for line in self.cleaned_data["settings"].splitlines():
            if not line.strip() or line.strip().startswith("#"):
                continue
            name, sep, value = line.partition("=")
            if not sep:
                raise forms.ValidationError(f"'{line.strip()}' is not name = value.")
            overrides[name.strip()] = value.strip().strip("'")
        return overrides

    def job_request(self) -> dict[str, Any]:
        """The body the job API takes."""
        data = self.cleaned_data
        body = {
            "versions": data["versions"].split(),
            "workload": {
                "name": data["builtin"],
                "builtin": data["builtin"],
                "query_mode": data["query_mode"],
            },
            "scale": data["scale"],
            "clients": data["clients"],
            "duration_s": data["duration_s"],
            "repeats": data["repeats"],
            "order": data["order"],
            "priority": data["priority"],
            "config_overrides": data["settings"],
        }
        if data["host"]:
            body["host"] = data["host"]
        return body


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[Any]:
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(item, initial) for item in data if item]
        return [single(data, initial)] if data else []


class ImportOutputsForm(forms.Form):
    version = forms.CharField(max_length=100, help_text="the server version, e.g. 13.3")
    host = forms.CharField(max_length=200, help_text="the machine's name")
    files = MultipleFileField(required=False, help_text="pgbench outputs, one per execution")
    pasted = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 10}),
        label="or paste outputs",
        help_text="one after another, separated by a line of ---",
    )
    config = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        label="postgresql.conf",
        help_text="optional",
    )
    lscpu = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        label="lscpu output",
        help_text="optional",
    )


class ImportSummaryForm(forms.Form):
    host = forms.CharField(max_length=200, help_text="a name for the machine the paper used")
    cpu_model = forms.CharField(max_length=300, required=False)
    cores = forms.IntegerField(min_value=1, required=False, help_text="physical cores in total")
    memory_gb = forms.IntegerField(min_value=1, required=False, label="memory (GiB)")
    builtin = forms.ChoiceField(
        choices=[("", "custom"), *Workload.Builtin.choices], required=False, label="workload"
    )
    workload_name = forms.CharField(
        max_length=200, required=False, help_text="for a custom workload, its name"
    )
    scale = forms.IntegerField(min_value=1, required=False)
    duration_s = forms.FloatField(min_value=1, required=False, label="duration (s)")
    table = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 10}),
        help_text="header: clients 13.3 14beta1; then one row per level",
    )
    note = forms.CharField(
        required=False,
        max_length=2000,
        help_text="where the numbers come from (paper, blog post, URL)",
    )

    def workload(self) -> dict[str, Any]:
        builtin = self.cleaned_data["builtin"]
        if builtin:
            return {"name": builtin, "builtin": builtin}
        name = self.cleaned_data["workload_name"] or "published"
        return {"name": name, "scripts": [{"name": name, "weight": 1, "body": "-- not published"}]}

    def facts(self) -> dict[str, Any]:
        data = self.cleaned_data
        facts: dict[str, Any] = {"cpu_model": data["cpu_model"]} if data["cpu_model"] else {}
        if data["cores"]:
            facts["cores"] = data["cores"]
        if data["memory_gb"]:
            facts["memory_bytes"] = data["memory_gb"] * 1024**3
        return facts
