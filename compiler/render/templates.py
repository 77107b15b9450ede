"""Jinja2 environment for vendor syntax in templates/<consumer>/: strict (an undefined
name is an error, never an empty string), no autoescape (these are not HTML), blocks
trimmed so templates can be indented for reading."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                              autoescape=False, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def render_template(template: str, **context) -> str:
    return environment().get_template(template).render(**context)
