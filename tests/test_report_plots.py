"""report.html's plots: a value axis with ticks and a label with its unit, a sentence that
says what each shows, bandwidths in Gb/s or Tb/s."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from compiler.pipeline import build_plan, write_outputs
from compiler.render.units import rate_text

SPECS = Path(__file__).parents[1] / "specs"


class _Plots(HTMLParser):
    """Per <figure> of the plots: its SVG texts and its caption."""

    def __init__(self, text: str):
        super().__init__()
        self.figures: list[dict] = []
        self._where = ""
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "figure":
            self.figures.append({"texts": [], "caption": ""})
        elif tag in ("text", "figcaption") and self.figures:
            self._where = tag
            if tag == "text":
                self.figures[-1]["texts"].append("")

    def handle_endtag(self, tag):
        if tag in ("text", "figcaption"):
            self._where = ""

    def handle_data(self, data):
        if self._where == "text":
            self.figures[-1]["texts"][-1] += data
        elif self._where == "figcaption":
            self.figures[-1]["caption"] += data


def test_rate_text_says_gb_s_below_a_terabit_and_tb_s_above():
    assert [rate_text(g) for g in (400, 800, 1000, 204_800, 1_638_400)] == \
        ["400 Gb/s", "800 Gb/s", "1 Tb/s", "204.8 Tb/s", "1,638 Tb/s"]


@pytest.mark.parametrize("name", ["h100-superpod-1su", "b200-superpod-4su-hall"])
def test_every_plot_has_a_value_axis_with_unit_and_a_sentence_saying_what_it_shows(name, tmp_path):
    _, plan = build_plan(SPECS / f"{name}.yaml")
    page = (write_outputs(plan, tmp_path, only=["report"]) / "report.html").read_text()
    figures = _Plots(page[page.index("<h2>Plots"):]).figures
    assert len(figures) == (3 if plan.physical is not None else 2)
    units = ["Tb/s, one direction", "% of bisection bandwidth lost", "links"]
    for fig, unit in zip(figures, units, strict=False):
        texts = fig["texts"]
        assert unit in texts, (unit, texts)  # the axis label
        ticks = [t for t in texts if re.fullmatch(r"[\d,.]+", t)]
        assert len(ticks) >= 2 and ticks[0] == "0"
        title, _, sentence = fig["caption"].partition(". ")
        assert title and len(sentence.split()) >= 8 and sentence.endswith(".")
    # bandwidth per tier: a hand count, in human units (32 DGX H100 x 8 x 400G per SU, one direction)
    servers = sum(1 for d in plan.devices if d.role == "server")
    want = rate_text(servers * 8 * 400)
    assert want.endswith(" Tb/s") and want in figures[0]["texts"]
