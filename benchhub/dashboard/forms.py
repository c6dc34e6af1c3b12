"""HTML forms. They collect input; validation is the API's (jobs.serializers), so a job queued
from the page and one queued through the API obey the same rules."""

import json
from collections.abc import Mapping
from typing import Any

from benchhub_runner.jobspec.plan import MAX_REPEATS, QUERY_MODE_DEFAULT, plan_default
from django import forms
from django.db import models
from rest_framework.exceptions import ValidationError as ApiValidationError

from benchhub.api.errors import flatten_errors
from benchhub.bisections.origins import ORIGIN_FIELDS
from benchhub.builds.services import PatchIn
from benchhub.hosts.models import Host
from benchhub.hosts.selectors import host_list
from benchhub.jobs.models import Job
from benchhub.workloads.catalog import EXPERIMENTS, entry_list, params_from_text
from benchhub.workloads.models import Workload

# Rows of custom scripts the job form offers, each pgbench's -f file@weight.
SCRIPT_ROWS = 4
SCRIPT_PARTS = ("name", "weight", "body")
SCRIPT_PLACEHOLDER = "\\set id random(1, 100000)\nSELECT * FROM items WHERE id = :id;"
# The line that separates two setup steps in the form's setup text.
STEP_SEPARATOR = "---"

# What a custom workload gets for the fields left blank (a catalog entry brings its own).
CUSTOM_DEFAULTS: dict[str, Any] = {
    "scale": 1,
    "clients": [1, 2, 4, 8, 16, 32],
    "duration_s": 10.0,
}


def _numbers(text: str) -> list[int]:
    return [int(part) for part in text.replace(",", " ").split() if part.strip()]


def _as_named(choices: type[models.TextChoices]) -> list[tuple[str, str]]:
    """pgbench's own spelling (select-only, prepared) rather than Django's "Select Only"."""
    return [(value, value) for value in choices.values]


def _host_choices() -> list[tuple[str, str]]:
    return [("", "any host"), *((host.name, host.name) for host in host_list())]


def tablespace_offers(hosts: list[Host]) -> str:
    """The tablespace names each host's agent offered at its last claim, for the form's help
    ("bench-01: fast, slow; bench-03: data"); hosts offering none are left out."""
    offers = [f"{h.name}: {', '.join(h.tablespaces)}" for h in hosts if h.tablespaces]
    return "; ".join(offers) or "no host's agent offers any yet"


def tag_offers(hosts: list[Host]) -> str:
    """The tags each host has (its agent's offer at its last claim, or the admin's), for the
    form's help ("bench-01: nvme; bench-02: 56-core, nvme"); hosts with none are left out."""
    offers = [f"{h.name}: {', '.join(h.tags)}" for h in hosts if h.tags]
    return "; ".join(offers) or "no host has tags yet"


def catalog_choices() -> list[tuple[str, Any]]:
    """The catalog entries grouped by experiment, after a 'custom' choice."""
    groups: list[tuple[str, Any]] = [("", "custom: the builtin and query mode below")]
    for experiment in EXPERIMENTS:
        entries = [(e.id, f"{e.id}: {e.title}") for e in entry_list() if e.experiment == experiment]
        groups.append((experiment, entries))
    return groups


class JobForm(forms.Form):
    versions = forms.CharField(
        help_text="space-separated, e.g. 13 14 or 13.3 14beta1; the first is the baseline",
        widget=forms.TextInput(attrs={"placeholder": "13 14", "autofocus": True}),
    )
    catalog = forms.ChoiceField(
        choices=catalog_choices,
        required=False,
        label="Catalog workload",
        help_text="a named workload of the catalog (see Workloads); blank fields below take "
        "its job defaults",
    )
    params = forms.CharField(
        required=False,
        label="Catalog params",
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "rows = 1000000"}),
        help_text="for a catalog workload: one name = value per line, or a JSON object; "
        "blank keeps the entry's small defaults",
    )
    # Not required: the page disables both while a catalog workload is chosen.
    builtin = forms.ChoiceField(
        choices=_as_named(Workload.Builtin),
        initial="select-only",
        required=False,
        label="Custom workload",
    )
    query_mode = forms.ChoiceField(
        choices=_as_named(Workload.QueryMode), initial=QUERY_MODE_DEFAULT, required=False
    )
    # Custom scripts (script_<i>_name, _weight, _body) are added per row in __init__; like the
    # rest of the form they are checked by the API's serializer, job-code checker included.
    workload_name = forms.CharField(
        required=False,
        label="Workload name",
        help_text="for custom scripts: the name pages and comparisons give it; blank: custom",
    )
    setup = forms.CharField(
        required=False,
        label="Setup SQL",
        widget=forms.Textarea(
            attrs={
                "rows": 3,
                "placeholder": "CREATE TABLE items AS SELECT generate_series(1, 100000) AS id;",
            }
        ),
        help_text="for a custom workload: SQL run once per version before the measurements "
        f"(and before pgbench -i when a builtin runs); steps separated by a line of "
        f"{STEP_SEPARATOR}",
    )
    scale = forms.IntegerField(
        min_value=1, required=False, help_text="pgbench -s; blank: the default (custom: 1)"
    )
    clients = forms.CharField(
        required=False,
        help_text="client levels, pgbench -c; blank: the default (custom: 1 2 4 8 16 32)",
    )
    duration_s = forms.FloatField(
        min_value=1,
        required=False,
        label="Duration (s)",
        help_text="per level and repeat, pgbench -T; blank: the default (custom: 10)",
    )
    repeats = forms.IntegerField(
        min_value=1,
        max_value=MAX_REPEATS,
        required=False,
        help_text=f"blank: the default (custom: {plan_default('repeats')})",
    )
    warmup_s = forms.FloatField(
        min_value=0,
        required=False,
        label="Warm-up (s)",
        help_text="run before each measurement, its figures dropped; blank: 10% of the "
        "duration within 2 to 30 s; 0: none",
    )
    level_order = forms.ChoiceField(
        choices=Job.LevelOrder.choices,
        initial=Job.LevelOrder.GIVEN,
        required=False,
        label="Client levels",
        help_text="the order of the client levels within one version's sweep (not the order "
        "of the versions: see Versions' turns)",
    )
    profile_clients = forms.IntegerField(
        min_value=1,
        required=False,
        label="Profiled level",
        help_text="the client level whose CPU profile (perf) the agent takes, where the host "
        "allows; blank: the largest level",
    )
    order = forms.ChoiceField(
        choices=Job.Order.choices,
        initial=Job.Order.INTERLEAVED,
        label="Versions' turns",
        help_text="how the versions take turns on the host (not the order of the client "
        "levels: see Client levels)",
    )
    host = forms.ChoiceField(choices=_host_choices, required=False)
    # The API's rules (count, spelling) are checked by its serializer, as for tablespaces.
    host_tags = forms.CharField(
        required=False,
        label="Host tags",
        help_text="space-separated: with no host above, any host whose agent offers all of "
        "these tags runs the job",
    )
    # Names only: the host owner maps each to a directory in the agent's [tablespaces]; the
    # API's rules (a name's spelling, the named host offering it) are checked by its serializer.
    tablespaces = forms.CharField(
        required=False,
        help_text="space-separated tablespace names the host's agent offers, created on each "
        "server before the setup (pgbench -i: tables in the first, indexes in the last); "
        "blank: none, or a catalog workload's own",
    )
    settings = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "shared_buffers = '1GB'"}),
        help_text="postgresql.conf overrides, one name = value per line; for a catalog "
        "workload, blank keeps the entry's",
    )
    priority = forms.IntegerField(initial=0, help_text="higher runs first")
    aa = forms.BooleanField(
        required=False,
        label="A/A",
        help_text="run the one version against itself (two separate series) to measure noise",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        hosts = list(host_list())
        offers = self.fields["tablespaces"]
        offers.help_text = f"{offers.help_text}. Offered: {tablespace_offers(hosts)}"
        tags = self.fields["host_tags"]
        tags.help_text = f"{tags.help_text}. Offered: {tag_offers(hosts)}"
        for row in range(SCRIPT_ROWS):
            self.fields.update(_script_fields(row))

    def main_fields(self) -> list[Any]:
        """The bound fields shown in the form's table: all but the script rows."""
        return [f for f in self.visible_fields() if not f.name.startswith("script_")]

    def script_rows(self) -> list[tuple[int, list[Any]]]:
        """(row, [name, weight, body] bound fields) for the form's scripts table."""
        return [
            (row, [self[f"script_{row}_{part}"] for part in SCRIPT_PARTS])
            for row in range(SCRIPT_ROWS)
        ]

    def _scripts(self) -> list[dict[str, Any]]:
        """The script rows up to the last one filled in, as the API takes them: a blank row
        before it is sent too (and refused, naming it), so scripts[i] is always row i."""
        data = self.cleaned_data
        rows = [
            (data.get(f"script_{r}_name") or "", data.get(f"script_{r}_weight"),
             data.get(f"script_{r}_body") or "")
            for r in range(SCRIPT_ROWS)
        ]  # fmt: skip
        filled = [r for r, (name, weight, body) in enumerate(rows) if name or body.strip()]
        return [
            # Browsers send a textarea's lines ending in CR LF; pgbench reads LF.
            {
                "name": name.strip(),
                "weight": 1 if weight is None else weight,
                "body": body.replace("\r\n", "\n"),
            }
            for name, weight, body in rows[: filled[-1] + 1 if filled else 0]
        ]

    def clean_tablespaces(self) -> list[str]:
        return self.cleaned_data["tablespaces"].replace(",", " ").split()

    def clean_host_tags(self) -> list[str]:
        return self.cleaned_data["host_tags"].replace(",", " ").split()

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

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if data.get("catalog") and data.get("params", "").strip():
            try:
                data["params"] = params_from_text(entry_id=data["catalog"], text=data["params"])
            except ApiValidationError as exc:
                messages = flatten_errors(exc.detail).items()
                self.add_error("params", [f"{path}: {'; '.join(m)}" for path, m in messages])
        elif data.get("params", "").strip():
            self.add_error("params", "Params are for a catalog workload; choose one above.")
        if data.get("catalog") and self._scripts():
            self.add_error("script_0_body", "Scripts are for a custom workload; the catalog "
                           "entry brings its own.")  # fmt: skip
        if data.get("catalog") and data.get("setup", "").strip():
            self.add_error("setup", "Setup is for a custom workload; the catalog entry brings "
                           "its own.")  # fmt: skip
        return data

    def job_request(self) -> dict[str, Any]:
        """The body the job API takes. Blank fields are left out for a catalog workload (the
        server applies the entry's defaults) and take CUSTOM_DEFAULTS for a custom one."""
        data = self.cleaned_data
        body: dict[str, Any] = {
            "versions": data["versions"].split(),
            "order": data["order"],
            "level_order": data["level_order"] or Job.LevelOrder.GIVEN,
            "priority": data["priority"],
        }
        if data.get("aa"):
            body["aa"] = True
        for name in ("scale", "clients", "duration_s", "repeats", "warmup_s", "profile_clients"):
            if data[name] not in (None, []):
                body[name] = data[name]
        if data["catalog"]:
            body["workload"] = {"catalog": data["catalog"], "params": data["params"] or {}}
            if data["settings"]:
                body["config_overrides"] = data["settings"]
        else:
            body["workload"] = self._custom_workload()
            body["config_overrides"] = data["settings"]
            body = {**CUSTOM_DEFAULTS, **body}
        if data["host"]:
            body["host"] = data["host"]
        if data["host_tags"]:
            body["host_tags"] = data["host_tags"]
        if data["tablespaces"]:
            body["tablespaces"] = data["tablespaces"]
        return body

    def _custom_workload(self) -> dict[str, Any]:
        """Custom scripts (pgbench -f file@weight each) when any row is filled in, else the
        builtin; with the setup steps and the query mode either way."""
        data = self.cleaned_data
        workload: dict[str, Any] = {"query_mode": data["query_mode"] or QUERY_MODE_DEFAULT}
        scripts = self._scripts()
        if scripts:
            workload.update(name=data["workload_name"].strip() or "custom", scripts=scripts)
        else:
            builtin = data["builtin"] or "select-only"
            workload.update(name=data["workload_name"].strip() or builtin, builtin=builtin)
        steps = setup_steps(data["setup"])
        if steps:
            workload["setup"] = steps
        return workload


def _script_fields(row: int) -> dict[str, forms.Field]:
    return {
        f"script_{row}_name": forms.CharField(
            required=False,
            label=f"scripts[{row}].name",
            widget=forms.TextInput(
                attrs={"placeholder": "read-heavy.sql", "aria-label": f"scripts[{row}].name"}
            ),
        ),
        f"script_{row}_weight": forms.IntegerField(
            required=False,
            label=f"scripts[{row}].weight",
            widget=forms.NumberInput(
                attrs={"placeholder": "1", "aria-label": f"scripts[{row}].weight"}
            ),
        ),
        f"script_{row}_body": forms.CharField(
            required=False,
            strip=False,
            label=f"scripts[{row}].body",
            widget=forms.Textarea(
                attrs={
                    "rows": 3,
                    "placeholder": SCRIPT_PLACEHOLDER,
                    "aria-label": f"scripts[{row}].body",
                }
            ),
        ),
    }


def setup_steps(text: str) -> list[str]:
    """The setup text as its steps: separated by lines of STEP_SEPARATOR, blank steps left
    out (a step may hold several statements; the agent runs each on its own)."""
    steps: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip() == STEP_SEPARATOR:
            steps.append([])
        else:
            steps[-1].append(line)
    return [joined for step in steps if (joined := "\n".join(step).strip())]


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
    version = forms.CharField(
        max_length=100,
        required=False,
        help_text="the server version, e.g. 13.3; else the one the outputs' banner names",
    )
    host = forms.CharField(max_length=200, help_text="the machine's name")
    # The form metaclass takes declared fields out of the class, so this does not hide Form.files.
    files = MultipleFileField(  # type: ignore[assignment]
        required=False, help_text="pgbench outputs, one per execution"
    )
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
    note = forms.CharField(
        required=False,
        max_length=2000,
        help_text="where the outputs come from (wiki page, issue, README)",
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
        help_text="as published: a Markdown or pipe table (then pick its columns), tab-separated "
        "rows, or a header 'clients 13.3 14beta1' and one row per level",
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


def _positive_int(text: str | None) -> int | None:
    text = (text or "").strip()
    return int(text) if text.isdigit() and 0 < len(text) <= 9 and int(text) > 0 else None


def asked_clients(data: Mapping[str, str], count: int) -> list[int | None]:
    """The clients the import page asked for, `clients_<i>` per output i (from 0)."""
    return [_positive_int(data.get(f"clients_{index}")) for index in range(count)]


def chosen_columns(
    data: Mapping[str, str], width: int
) -> tuple[int | None, list[tuple[int | str, str]] | None]:
    """The columns picked on the table import page: `clients_column` (an index) and
    `version_<i>` (the version of column i; empty for a column not imported). (None, None)
    when the page has not shown the columns yet."""
    if "columns_shown" not in data:
        return None, None
    clients = data.get("clients_column", "")
    versions: list[tuple[int | str, str]] = [
        (index, data[f"version_{index}"].strip())
        for index in range(width)
        if data.get(f"version_{index}", "").strip() and str(index) != clients
    ]
    return (int(clients) if clients.isdigit() else None), versions


class RecipeForm(forms.Form):
    """A build recipe (docs/agent.md, "Building PostgreSQL from source"); checked in full by
    builds.services.recipe_create, which names the field at fault."""

    name = forms.CharField(max_length=100, help_text="as users say it: 9.6.24, master+my-patch")
    base = forms.CharField(
        max_length=100, required=False, help_text="optional: a release or recipe it follows"
    )
    description = forms.CharField(
        max_length=2000, required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    kind = forms.ChoiceField(
        choices=[("release", "release"), ("tarball", "tarball"), ("git", "git")],
        label="source",
    )
    release = forms.CharField(max_length=30, required=False, help_text="release: e.g. 15.18")
    url = forms.CharField(max_length=1000, required=False, help_text="tarball or git URL")
    path = forms.CharField(max_length=1000, required=False, help_text="tarball on the agent host")
    sha256 = forms.CharField(max_length=64, required=False, help_text="tarball: its sha256")
    ref = forms.CharField(max_length=200, required=False, help_text="git: commit, tag or branch")
    branch = forms.CharField(max_length=200, required=False, help_text="git: a branch ...")
    date = forms.CharField(max_length=10, required=False, help_text="... and a date, YYYY-MM-DD")
    configure_flags = forms.CharField(
        max_length=5000, required=False, help_text="space-separated, e.g. --enable-debug"
    )
    cflags = forms.CharField(max_length=1000, required=False, label="CFLAGS")
    contrib = forms.CharField(
        max_length=2000, required=False, help_text="space-separated, e.g. pg_stat_statements"
    )
    patches = MultipleFileField(required=False, help_text="applied in the order given")

    def recipe_request(self) -> dict[str, Any]:
        data = self.cleaned_data
        kind = data["kind"]
        keys = {
            "release": [("version", "release")],
            "tarball": [("url", "url"), ("path", "path"), ("sha256", "sha256")],
            "git": [("url", "url"), ("ref", "ref"), ("branch", "branch"), ("date", "date")],
        }[kind]
        source = {"kind": kind, **{key: data[f] for key, f in keys if data[f]}}
        return {
            "name": data["name"],
            "base": data["base"],
            "description": data["description"],
            "source": source,
            "configure_flags": data["configure_flags"].split(),
            "cflags": data["cflags"],
            "contrib": data["contrib"].replace(",", " ").split(),
            "patches": [
                PatchIn(name=upload.name, content=upload.read()) for upload in data["patches"]
            ],
        }


def _git_recipe_choices() -> list[tuple[str, str]]:
    from benchhub.builds.models import Recipe

    recipes = Recipe.objects.filter(source_kind=Recipe.Kind.GIT).order_by("sort_key", "name")
    return [(r.name, f"{r.name} ({r.url})") for r in recipes[:500]]


class BisectionForm(forms.Form):
    """A bisection: a git recipe's repository between two refs, one workload at one level on
    one host. Started from two runs or a regression (the hidden fields), the measurement is the
    good run's and its fields are not asked; the rest is prefilled from them. Validation is the
    API's (bisections.serializers)."""

    MEASUREMENT = ("catalog", "builtin", "query_mode", "scale", "duration_s")

    recipe = forms.ChoiceField(choices=_git_recipe_choices, help_text="a recipe built from git")
    good = forms.CharField(max_length=200, help_text="a commit, tag or branch without the change")
    bad = forms.CharField(max_length=200, help_text="a commit, tag or branch with it")
    host = forms.ChoiceField(choices=_host_choices)
    good_run = forms.CharField(max_length=40, required=False, widget=forms.HiddenInput)
    bad_run = forms.CharField(max_length=40, required=False, widget=forms.HiddenInput)
    regression = forms.IntegerField(min_value=1, required=False, widget=forms.HiddenInput)
    catalog = forms.ChoiceField(choices=catalog_choices, required=False, label="Catalog workload")
    builtin = forms.ChoiceField(
        choices=_as_named(Workload.Builtin), initial="select-only", required=False
    )
    query_mode = forms.ChoiceField(
        choices=_as_named(Workload.QueryMode), initial=QUERY_MODE_DEFAULT, required=False
    )
    scale = forms.IntegerField(min_value=1, required=False, help_text="pgbench -s; blank: 1")
    clients = forms.IntegerField(min_value=1, help_text="the one client level measured")
    duration_s = forms.FloatField(min_value=1, initial=30, label="Duration (s)")
    repeats = forms.IntegerField(min_value=2, max_value=20, initial=3, help_text="per step")
    change = forms.FloatField(
        required=False,
        help_text="bad / good in tps (0.92: 8% slower); blank: measured from the two ends",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        source = self.data if self.is_bound else self.initial
        self.from_origin = any(source.get(n) for n in ORIGIN_FIELDS)
        if self.from_origin:
            for name in self.MEASUREMENT:
                del self.fields[name]

    def bisection_request(self) -> dict[str, Any]:
        """The body the bisection API takes."""
        data = self.cleaned_data
        body: dict[str, Any] = {
            name: data[name] for name in ("recipe", "good", "bad", "host", "clients", "repeats")
        }
        body["change"] = data["change"]
        if self.from_origin:
            for name in ORIGIN_FIELDS:
                if data[name]:
                    body[name] = data[name]
            return body
        body["duration_s"] = data["duration_s"]
        if data["scale"] is not None:
            body["scale"] = data["scale"]
        if data["catalog"]:
            body["workload"] = {"catalog": data["catalog"]}
        else:
            builtin = data["builtin"] or "select-only"
            body["workload"] = {
                "name": builtin,
                "builtin": builtin,
                "query_mode": data["query_mode"] or QUERY_MODE_DEFAULT,
            }
            body.setdefault("scale", 1)
        return body


class ScheduleForm(forms.Form):
    """A schedule's crontab and job template (JSON, as the schedule API takes it); its name is
    what identifies it (and its file, for `benchhub apply`), so it is not edited here."""

    crontab = forms.CharField(max_length=100, help_text="minute hour day month weekday, UTC")
    template = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 18, "cols": 80, "spellcheck": "false"}),
        help_text="the job's fields as POST /api/v1/jobs/ takes them (JSON)",
    )

    def clean_template(self) -> dict[str, Any]:
        try:
            value = json.loads(self.cleaned_data["template"])
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"Not valid JSON (line {exc.lineno}): {exc.msg}") from None
        if not isinstance(value, dict):
            raise forms.ValidationError("Give one JSON object: the job's fields.")
        return value
