"""`manage.py runner_revoke NAME`: revoke every token of host NAME at once."""

from django.core.management.base import BaseCommand, CommandParser

from benchhub.hosts.services import runner_tokens_revoke


class Command(BaseCommand):
    help = "Revoke all live runner tokens of host NAME."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")

    def handle(self, *args, name: str, **options) -> None:
        count = runner_tokens_revoke(host_name=name)
        self.stdout.write(f"Revoked {count} token(s) of host '{name}'.")
