"""`manage.py runner_create NAME`: issue a token for the agent on host NAME and print it once."""

from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from benchhub.hosts.services import HostNameTaken, runner_token_create


class Command(BaseCommand):
    help = "Create a runner token for host NAME (creating the host) and print the token once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the host's name, as its agent reports it")
        parser.add_argument("--expires-days", type=int, default=None, help="expire after N days")

    def handle(self, *args, name: str, expires_days: int | None, **options) -> None:
        expires_at = timezone.now() + timedelta(days=expires_days) if expires_days else None
        try:
            _, plaintext = runner_token_create(host_name=name, expires_at=expires_at)
        except HostNameTaken as exc:
            raise CommandError(exc.detail) from None
        # The token alone on stdout, so `TOKEN=$(manage.py runner_create h1)` works.
        self.stdout.write(plaintext)
        self.stderr.write(f"Token for host '{name}' created; it is not shown again.")
