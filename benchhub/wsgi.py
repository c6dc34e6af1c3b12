"""WSGI entry point, served by gunicorn (`gunicorn benchhub.wsgi:application`)."""

import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchhub.settings")

application = get_wsgi_application()


def _long_lived_heap_freeze() -> None:
    """Import every view (and with them numpy, scipy, plotly) now, then move everything alive to
    the garbage collector's permanent generation.

    A full collection walks every object the process holds, and most of them are the modules
    loaded once: at ~240,000 such objects a worker's full collection took 70-100 ms in the
    middle of whichever request triggered it (the p95 outliers of the pages in bench/,
    compare). Frozen, they are no longer walked (a full collection then took ~5 ms). Nothing
    frozen is ever freed, so only what a worker keeps for its life is there at this point.
    """
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - the import of every view module is the point
    gc.collect()
    gc.freeze()


_long_lived_heap_freeze()
