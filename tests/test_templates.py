"""row_format: a row macro rendered once into a %-format that big tables fill per row, so
file syntax stays in templates/ without a Jinja call per row."""

from __future__ import annotations

import jinja2
import pytest

from compiler.render import templates
from compiler.render.templates import row_format


def test_real_row_macros_become_formats():
    assert row_format("ptm/elements.j2", "edge", 4) == "  %s:%s -- %s:%s\n"
    assert row_format("containerlab/elements.j2", "link", 4) % ("a", 1, "b", 2) == '    - endpoints: ["a:eth1", "b:eth2"]\n'
    header = str(templates.environment().get_template("netbox/tables.j2").module.cables_header())
    row = row_format("netbox/tables.j2", "cables", 12)
    assert header.count(",") == row.count(",") == 14  # header and row of a NetBox table have the same columns


@pytest.fixture
def fake_templates(monkeypatch):
    env = jinja2.Environment(loader=jinja2.DictLoader({
        "t/ok.j2": "{% macro row(a, b) %}{{ a }} is 100% {{ b }}\n{% endmacro %}",
        "t/swapped.j2": "{% macro row(a, b) %}{{ b }},{{ a }}\n{% endmacro %}",
        "t/twice.j2": "{% macro row(a, b) %}{{ a }},{{ b }},{{ a }}\n{% endmacro %}",
        "t/dropped.j2": "{% macro row(a, b) %}{{ a }}\n{% endmacro %}",
    }), undefined=jinja2.StrictUndefined, trim_blocks=True)
    monkeypatch.setattr(templates, "environment", lambda: env)


def test_literal_percent_signs_survive(fake_templates):
    assert row_format("t/ok.j2", "row", 2) % ("fan", "on") == "fan is 100% on\n"


@pytest.mark.parametrize("name", ["t/swapped.j2", "t/twice.j2", "t/dropped.j2"])
def test_a_macro_that_does_not_use_each_argument_once_in_order_is_refused(fake_templates, name):
    with pytest.raises(ValueError, match="every argument once, in order"):
        row_format(name, "row", 2)
