"""`benchhub try`: the recipes a patch trial needs, and its job.

The base is an existing recipe (`--against`), or a git ref's recipe (benchhub_cli.refs); the
trial's recipe is the base's source, flags, CFLAGS and contrib plus the given patches, named
`<base>+<label>` after the patch files. A
recipe of that name with the same content (patches compared by name and sha256) is reused, so
trying the same patch again pools with the earlier trials; one with other content is refused
rather than changed, since its runs would mean something else."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchhub_cli.api import Api, Refused
from benchhub_cli.errors import CliError
from benchhub_cli.refs import ref_base

BUILTINS = ("tpcb-like", "select-only", "simple-update")
LABEL_MAX = 63
COMPARED = ("source", "configure_flags", "cflags", "contrib")


@dataclass(frozen=True)
class PatchFile:
    name: str
    text: str
    sha256: str


def patches_read(paths: list[Path]) -> list[PatchFile]:
    """The patch files as the recipe API takes them; one that cannot be read or is not UTF-8
    is a usage error naming it (the agent applies patches as UTF-8 text)."""
    patches = []
    for path in paths:
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise CliError(f"{path}: cannot read the patch: {exc}") from None
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CliError(f"{path}: the patch is not UTF-8 (byte {exc.start})") from None
        patches.append(
            PatchFile(name=path.name, text=text, sha256=hashlib.sha256(content).hexdigest())
        )
    return patches


def trial_label(paths: list[Path]) -> str:
    """`slow.patch` -> `slow`; several patches -> their stems joined by `-`, within the version
    grammar's label (a letter or digit, then letters, digits and `. _ -`, up to 63)."""
    stems = [re.sub(r"\.(patch|diff)$", "", p.name) for p in paths]
    label = re.sub(r"[^A-Za-z0-9._-]+", "-", "-".join(stems)).strip("-._")
    return label[:LABEL_MAX] or "patch"


def recipes_define(
    api: Api, *, against: str, repo: str | None, label: str, patches: list[PatchFile]
) -> tuple[str, str]:
    """(base version, patched version): the base as `base_recipe` finds or defines it, the
    patched one defined or reused. Refused (status 2): a base with patches of its own (their
    texts are not served back, so the trial could not carry them), a name taken by other
    content."""
    base = base_recipe(api, against=against, repo=repo)
    if base.get("patches"):
        raise CliError(
            f"--against: recipe {against} has patches of its own; "
            "try against a recipe without patches"
        )
    wanted = {
        "name": f"{base['name']}+{label}", "base": base["name"],
        "description": f"benchhub try: {base['name']} with {', '.join(p.name for p in patches)}",
        "source": base["source"], "configure_flags": base.get("configure_flags") or [],
        "cflags": base.get("cflags") or "", "contrib": base.get("contrib") or [],
        "patches": [{"name": p.name, "text": p.text} for p in patches],
    }  # fmt: skip
    hint = "name this trial otherwise with --label"
    return base["name"], _defined(api, wanted, patches, hint=hint)


def base_recipe(api: Api, *, against: str, repo: str | None) -> dict[str, Any]:
    """The recipe named `against`; or, when there is none or `--repo` is given, the recipe of
    git ref `against` (benchhub_cli.refs), defined when new. Refused (status 2) as `ref_base`
    refuses, or when the name the ref gives is taken by other content."""
    if repo is None:
        recipe = _recipe(api, against)
        if recipe is not None:
            return recipe
    base = ref_base(api.get("/api/v1/recipes/"), ref=against, repo=repo)
    if "url" in base:  # an existing recipe, as the API gives it
        return base
    wanted = {**base, "description": f"benchhub try: {against} of {base['source']['url']}"}
    name = _defined(api, wanted, [], hint=f"pass --against {base['name']} to try against it")
    return _recipe(api, name) or wanted


def _defined(api: Api, wanted: dict[str, Any], patches: list[PatchFile], *, hint: str) -> str:
    """The name of recipe `wanted`: defined, or reused when one of its name has its content;
    one of its name with other content is refused, with `hint`."""
    existing = _recipe(api, wanted["name"])
    if existing is None:
        api.call("POST", "/api/v1/recipes/", wanted)
        return str(wanted["name"])
    differs = [f for f in COMPARED if (existing.get(f) or None) != (wanted.get(f) or None)]
    if [(p["name"], p["sha256"]) for p in existing.get("patches") or []] != [
        (p.name, p.sha256) for p in patches
    ]:
        differs.append("patches")
    if differs:
        raise CliError(f"recipe {existing['name']} exists with other {', '.join(differs)}: {hint}")
    return str(existing["name"])


def _recipe(api: Api, name: str) -> dict[str, Any] | None:
    try:
        return api.call("GET", f"/api/v1/recipes/{name}/")  # type: ignore[no-any-return]
    except Refused as exc:
        if exc.http_status == 404:
            return None
        raise


def workload_of(api: Api, name: str) -> dict[str, Any]:
    """A pgbench builtin by its name, else a catalog entry (refused naming --workload)."""
    if name in BUILTINS:
        return {"name": name, "builtin": name}
    try:
        api.call("GET", f"/api/v1/workloads/catalog/{name}/")
    except Refused as exc:
        if exc.http_status == 404:
            raise CliError(
                f"--workload: no workload {name} (a builtin: {', '.join(BUILTINS)}, or an entry "
                "of GET /api/v1/workloads/catalog/)"
            ) from None
        raise
    return {"catalog": name}


def host_check(api: Api, host: str) -> None:
    hosts = [h["name"] for h in api.get("/api/v1/hosts/")]
    if host not in hosts:
        raise CliError(f"--host: no host named {host} (hosts: {', '.join(hosts) or 'none'})")
