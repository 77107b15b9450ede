"""The one Jinja2 environment. Vendor and tool syntax lives in templates/<consumer>/ at
the repository root; Python hands templates a structured config and they only spell it."""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2

# compiler/templates links to the repository's templates/; a wheel carries a copy.
TEMPLATE_DIR = Path(__file__).parents[1] / "templates"


@functools.cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        undefined=jinja2.StrictUndefined,  # a missing key is our bug: fail, never print ""
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render_template(template: str, /, **context) -> str:
    return environment().get_template(template).render(**context)


def stream_template(template: str, /, **context):
    """The rendered text in pieces, for files too large to hold as one string (graph.graphml)."""
    stream = environment().get_template(template).stream(**context)
    stream.enable_buffering(64)  # join 64 small pieces per write
    return stream
