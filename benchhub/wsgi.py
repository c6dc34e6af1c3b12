"""WSGI entry point, served by gunicorn (`gunicorn benchhub.wsgi:application`)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchhub.settings")

application = get_wsgi_application()
