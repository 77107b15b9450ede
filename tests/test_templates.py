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


# --- rows(): per-port tables of the switch configs ----------------------------------------
ROWS = """{% macro numbered(name, address, mtu) %}
interface {{ name }} mtu {{ mtu }}
 ip address {{ address }} ({{ name }}, 100%)
{% endmacro %}
{% macro unnumbered(name, lane) %}
interface {{ name }} lane {{ lane }}
{% endmacro %}
{% macro each(ports, lanes, mtu) %}
{% for p in ports %}
{% if p.mode == "numbered" %}
interface {{ p.name }} mtu {{ mtu }}
 ip address {{ p.address }} ({{ p.name }}, 100%)
{% elif p.mode == "unnumbered" %}
interface {{ p.name }} lane {{ lanes[loop.index0] }}
{% endif %}
{% endfor %}
{% endmacro %}
"""


def _env(source: str) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.DictLoader({"t.j2": source}), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.globals.update(rows=templates.rows, same=templates.same)
    return env


def test_rows_spell_what_a_jinja_loop_spells():
    """Runs of numbered, unnumbered and access ports (left out: no macro), a constant, a column
    beside the fields, a field printed twice and a literal % sign: the text of the loop."""
    from compiler.render.structured_config import Interface

    def port(name: str, mode: str) -> Interface:
        return Interface(name, name, "fabric", "10.0.0.1/31" if mode == "numbered" else None, "spine-1", "swp1",
                         None, 65000, 400, "0,1,2,3", 1, True, 4, mode)

    ports = [port("swp1", "numbered"), port("swp2", "numbered"), port("swp3", "unnumbered"), port("swp4", "access"),
             port("swp5", "numbered"), port("swp6", "unnumbered")]
    lanes = ["a", "b", "c", "d", "e", "f"]
    env = _env(ROWS + '{{ rows(ports, {"numbered": numbered, "unnumbered": unnumbered}, by="mode", '
                      'columns={"lane": lanes}, mtu=9216) }}')
    text = env.get_template("t.j2").render(ports=ports, lanes=lanes)
    module = env.get_template("t.j2").make_module({"ports": ports, "lanes": lanes})
    assert text == str(module.each(ports, lanes, 9216))
    assert text.count("interface") == 5 and "lane c" in text and "(swp5, 100%)" in text


@pytest.mark.parametrize("args, body, error", [
    ("gateway", "{{ gateway }} {{ d.asn }}", "reads template variable"),  # would write the first switch's ASN everywhere
    ("gateway", "{{ gateway | upper }}", "changes an argument"),
    ("gateway, nope", "{{ gateway }}{{ nope }}", "neither a row field"),
])
def test_rows_refuse_a_macro_they_cannot_fill_per_row(args, body, error):
    from compiler.render.structured_config import AccessVlan

    env = _env("{% set d = cfg %}{% macro row(" + args + ") %}" + body + "{% endmacro %}{{ rows(items, row) }}")
    with pytest.raises(ValueError, match=error):
        env.get_template("t.j2").render(items=[AccessVlan(1, "a", "b")], cfg={"asn": 1})


def test_rows_refuse_a_column_of_another_length():
    from compiler.render.structured_config import AccessVlan

    env = _env("{% macro row(vlan, x) %}{{ vlan }}{{ x }}{% endmacro %}{{ rows(items, row, columns={'x': [1]}) }}")
    with pytest.raises(ValueError, match="one value per row"):
        env.get_template("t.j2").render(items=[AccessVlan(1, "a", "b")] * 2)


def test_same_renders_once_per_arguments_and_refuses_template_variables():
    env = _env("{% macro block(n, xs) %}{% for x in xs %}{{ n }}{{ x }} {% endfor %}{% endmacro %}"
               "{{ same(block, n, xs) }}")
    assert env.get_template("t.j2").render(n=1, xs=[1, 2]) == "11 12 "
    assert env.get_template("t.j2").render(n=2, xs=[1, 2]) == "21 22 "  # another argument, another text
    bad = _env("{% set k = 3 %}{% macro block(n) %}{{ n }}{{ k }}{% endmacro %}{{ same(block, 1) }}")
    with pytest.raises(ValueError, match="reads template variable"):
        bad.get_template("t.j2").render()


@pytest.mark.parametrize("by", [None, "vlan"])
def test_rows_join_runs_and_rows_by_sep_even_a_percent_sign(by):
    """Each run of rows is filled at once and the runs joined: `sep` (here with a literal %)
    stands between every two rows, within a run and between runs, and after none."""
    from compiler.render.structured_config import AccessVlan

    items = [AccessVlan(1, "a", "x"), AccessVlan(1, "b", "y"), AccessVlan(2, "c", "z"), AccessVlan(2, "d", "w")]
    macros = "row" if by is None else '{1: row, 2: row}, by="vlan"'
    env = _env("{% macro row(gateway, subnet) %}<{{ gateway }}={{ subnet }}>{% endmacro %}"
               "{{ rows(items, " + macros + ", sep=\",%s\\n\") }}")
    assert env.get_template("t.j2").render(items=items) == ",%s\n".join(["<a=x>", "<b=y>", "<c=z>", "<d=w>"])


@pytest.mark.parametrize("sep", ["", ",%s\n"])
def test_rows_of_a_column_table_spell_what_rows_of_its_records_spell(sep):
    """A switch's ports as a slice of a ColumnTable (every switch's ports as columns) fill the
    same text as the list of their records: runs by one field and by two, a macro left out,
    a column beside the fields, a constant, a field twice, `sep`; the slice iterates, indexes
    and filters (where) to the records it stands for."""
    from compiler.render.structured_config import Interface

    def port(name: str, mode: str, kind: str) -> Interface:
        return Interface(name, name.upper(), kind, "10.0.0.1/31" if mode == "numbered" else None, "spine-1", "swp1",
                         None, 65000, 400, "0,1,2,3", 1, True, 4, mode)

    ports = [port("swp0", "numbered", "server"), port("swp1", "numbered", "fabric"), port("swp2", "numbered", "fabric"),
             port("swp3", "unnumbered", "fabric"), port("swp4", "access", "server"),
             port("swp5", "numbered", "fabric"), port("swp6", "unnumbered", "server"), port("swp7", "numbered", "server")]
    table = templates.ColumnTable(Interface, [list(c) for c in zip(*ports, strict=True)])
    rows = table.rows(1, 7)  # another switch's ports on either side
    assert list(rows) == ports[1:7] and rows[2] == ports[3] and len(rows) == 6
    assert list(rows.where("kind", "fabric")) == [p for p in ports[1:7] if p.kind == "fabric"]
    assert list(table.rows(6, 8).where("kind", "fabric")) == []
    lanes = ["a", "b", "c", "d", "e", "f"]
    s = sep.replace("\n", "\\n")
    calls = ['{{ rows(ports, {"numbered": numbered, "unnumbered": unnumbered}, by="mode", columns={"lane": lanes}, '
             'mtu=9216, sep="' + s + '") }}',
             '{{ rows(ports, {("numbered", "fabric"): numbered, ("unnumbered", "server"): unnumbered}, by=("mode", "kind"), '
             'columns={"lane": lanes}, mtu=1500, sep="' + s + '") }}',
             '{{ rows(ports, numbered, columns={"lane": lanes}, mtu=1, sep="' + s + '") }}',
             '{{ rows(ports | selectattr("kind", "equalto", "fabric") | list, nolanes, sep="' + s + '") }}']
    for call in calls:
        env = _env(ROWS + "{% macro nolanes(name, peer) %}{{ name }} {{ peer }} {{ name }}\n{% endmacro %}" + call)
        expected = env.get_template("t.j2").render(ports=ports[1:7], lanes=lanes)
        assert expected and env.get_template("t.j2").render(ports=rows, lanes=lanes) == expected, call
    fabric = _env("{% macro nb(name, peer_asn) %}{{ name }} {{ peer_asn }}\n{% endmacro %}{{ rows(ports, nb) }}")
    assert fabric.get_template("t.j2").render(ports=rows.where("kind", "fabric")) == "swp1 65000\nswp2 65000\nswp3 65000\nswp5 65000\n"


def test_a_column_given_as_a_function_is_made_when_read_and_must_fit():
    from compiler.render.structured_config import AccessVlan

    made = []
    table = templates.ColumnTable(AccessVlan, [[1, 2, 3], lambda: made.append(1) or ["a", "b", "c"], ["x", "y", "z"]])
    env = _env("{% macro row(vlan, subnet) %}{{ vlan }}={{ subnet }} {% endmacro %}{{ rows(items, row) }}")
    assert env.get_template("t.j2").render(items=table.rows(1, 3)) == "2=y 3=z " and not made  # gateway not printed
    assert list(table.rows(0, 2)) == [AccessVlan(1, "a", "x"), AccessVlan(2, "b", "y")] and made == [1]
    short = templates.ColumnTable(AccessVlan, [[1, 2], lambda: ["a"], ["x", "y"]])
    with pytest.raises(ValueError, match="has 1 rows, not 2"):
        list(short.rows(0, 2))
