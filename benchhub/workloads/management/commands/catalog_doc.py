"""`manage.py catalog_doc`: rewrite each catalog entry's facts in docs/workloads.md from the
catalog (benchhub/workloads/catalog_doc.py); `--check` only says whether they are current."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchhub.workloads.catalog_doc import catalog_doc_update

DOC = Path(__file__).resolve().parents[4] / "docs" / "workloads.md"


class Command(BaseCommand):
    help = "Write the catalog entries' params and jobs into docs/workloads.md (--check: compare)"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--check", action="store_true", help="fail if the document is stale")
        parser.add_argument("--doc", type=Path, default=DOC, help=f"default: {DOC}")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["doc"]
        text = path.read_text()
        try:
            current = catalog_doc_update(text)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if options["check"]:
            if current != text:
                raise CommandError(f"{path} is stale: run `python manage.py catalog_doc`")
            self.stdout.write(f"{path} matches the catalog")
        elif current != text:
            path.write_text(current)
            self.stdout.write(f"{path} rewritten from the catalog")
