"""`manage.py ensure_admin`: create the admin account on first start, print its password once."""

import os

from django.core.management.base import BaseCommand

from benchhub.accounts.services import admin_ensure


class Command(BaseCommand):
    help = "Create the superuser (BENCHHUB_ADMIN_USER, default admin) if it does not exist yet."

    def handle(self, *args, **options) -> None:
        username = os.environ.get("BENCHHUB_ADMIN_USER", "admin")
        generated = admin_ensure(
            username=username, password=os.environ.get("BENCHHUB_ADMIN_PASSWORD")
        )
        if generated:
            self.stdout.write(
                f"Created admin account '{username}' with password: {generated}\n"
                "It is shown only this once; change it at /admin/password_change/."
            )
