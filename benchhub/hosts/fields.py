"""A serializer field for a host given by name, read in any spelling its key reads as one."""

from __future__ import annotations

from typing import Any

from django.utils.encoding import smart_str
from rest_framework import serializers

from benchhub.hosts.models import Host, host_name_key


class HostNameField(serializers.SlugRelatedField):
    """A host by its name: `bench-01`, `BENCH-01` and `bench-01.` all name the host `bench-01`
    (host_name_key); shown as the host's own name."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(slug_field="name", queryset=Host.objects.all(), **kwargs)

    def to_internal_value(self, data: Any) -> Host:
        if not isinstance(data, str):
            self.fail("invalid")
        host = Host.objects.filter(name_key=host_name_key(data)).first()
        if host is None:
            self.fail("does_not_exist", slug_name="name", value=smart_str(data))
        return host
