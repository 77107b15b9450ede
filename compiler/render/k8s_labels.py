"""Kubernetes label syntax (kubernetes.io, "Labels and Selectors", Syntax and character
set): key = optional DNS-subdomain prefix (<= 253) + '/' + name (<= 63); value <= 63
characters of [A-Za-z0-9._-], alphanumeric at both ends, or empty."""

from __future__ import annotations

import re

_NAME = re.compile(r"^([A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)$")
_VALUE = re.compile(r"^([A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)?$")
_DNS_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
_PREFIX = re.compile(rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*$")


def key_problem(key: str) -> str | None:
    prefix, slash, name = key.rpartition("/")
    if slash and (len(prefix) > 253 or not _PREFIX.match(prefix)):
        return f"label key prefix {prefix!r} is not a DNS subdomain of at most 253 characters"
    if not _NAME.match(name):
        return f"label key name {name!r} is not 1-63 characters of [A-Za-z0-9._-] with alphanumeric ends"
    return None


def value_problem(value: str) -> str | None:
    if not _VALUE.match(value):
        return f"label value {value!r} is not 0-63 characters of [A-Za-z0-9._-] with alphanumeric ends"
    return None
