"""The documentation site builds with `mkdocs build --strict` (a broken link or a missing page
fails), and its generated reference lists everything the code has: each spec key of the JSON
Schema, each CLI command and option, each output and each finding code. What the reference
must list is found here independently of docs/gen_reference.py (from the schema's property
names and from the source text), so a generator that drops something fails."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("mkdocs", reason="the docs extra (./dev.sh test installs it)")
pytest.importorskip("material", reason="the docs extra (./dev.sh test installs it)")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                          "-d", str(out)], cwd=ROOT, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"})
    assert run.returncode == 0, run.stderr[-4000:]
    return out


def _text(site: Path, page: str) -> str:
    """The page's text with tags removed, so `fabric.switch` matches however it is marked up."""
    raw = (site / page).read_text()
    return html.unescape(re.sub(r"<[^>]+>", "", raw))


def _property_names(node, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in node.get("properties", {}).items() if isinstance(node.get("properties"), dict) else []:
            found.add(key)
        for value in node.values():
            _property_names(value, found)
    elif isinstance(node, list):
        for value in node:
            _property_names(value, found)
    return found


def test_spec_reference_lists_every_key_of_the_schema(site):
    from compiler.spec.schema import spec_schema
    schema = spec_schema()
    page = _text(site, "reference/spec.html")
    keys = re.findall(r"^([a-z_<>\[\].]+)\s*$", page, re.M)  # a key cell is on its own line
    documented = {k.rsplit(".", 1)[-1] for k in keys}
    missing = sorted(_property_names(schema, set()) - documented)
    assert not missing, f"spec keys not in the reference: {missing}"
    for key in schema["properties"]:
        assert key in keys, key
    # keys a reader looks for, as paths
    for path in ("fabric.switch", "fabric.scalable_unit", "layout.rack.power_kw", "growth.max_servers"):
        assert any(k == path or k.startswith(path + "[") for k in keys), path


def test_cli_reference_lists_every_command_and_option(site):
    source = (ROOT / "compiler" / "cli.py").read_text()
    page = _text(site, "reference/cli.html")
    commands = set(re.findall(r"@app\.command\(\s*(?:name=)?\"([a-z-]+)\"", source))
    commands |= {name.replace("_", "-") for name in re.findall(r"@app\.command\(\)\s*(?:@[^\n]*\n\s*)*def ([a-z_]+)", source)}
    commands |= {"catalog " + n for n in re.findall(r"@catalog_app\.command\(\"([a-z-]+)\"", source)}
    assert {"compile", "check", "verify", "explore", "catalog list"} <= commands  # the scan itself works
    missing = sorted(c for c in commands if f"clusterc {c}" not in page)
    assert not missing, f"commands not in the reference: {missing}"
    options = set(re.findall(r"\"(--[a-z][a-z0-9-]*)\"", source))
    assert len(options) > 10
    missing = sorted(o for o in options if o not in page)
    assert not missing, f"options not in the reference: {missing}"


def _finding_codes() -> set[str]:
    codes: set[str] = set()
    for path in (ROOT / "compiler").rglob("*.py"):
        text = path.read_text()
        codes |= set(re.findall(r"Finding\(\s*\"([A-Z][A-Z0-9_]+)\"", text))  # check findings: code first
        codes |= set(re.findall(r"Finding\(\s*\"(?:error|warning|info)\",\s*\"([A-Z][A-Z0-9_]+)\"", text))  # NCCL lint
        if "Finding(code" in text:  # a code picked in a variable first
            for pair in re.findall(r"\bcode = \"([A-Z][A-Z0-9_]+)\" if .* else \"([A-Z][A-Z0-9_]+)\"", text):
                codes |= set(pair)
    return codes


def test_findings_reference_lists_every_code_in_the_code(site):
    codes = _finding_codes()
    assert {"PORT_REUSED", "BISECTION_BELOW_REQUIREMENT", "LAST_SU_UNDER_HALF_FULL", "NCCL_NO_ROOT"} <= codes
    page = _text(site, "reference/findings.html")
    missing = sorted(c for c in codes if c not in page)
    assert not missing, f"finding codes not in the reference: {missing}"


def test_outputs_reference_lists_every_output_and_the_cabling_columns(site):
    from compiler.render import RENDERERS
    page = _text(site, "reference/outputs.html")
    missing = sorted(name for name in RENDERERS if not re.search(rf"^{re.escape(name)}\s*$", page, re.M))
    assert not missing, f"outputs not in the reference: {missing}"
    header = (ROOT / "out" / "b200-superpod-4su" / "cabling.csv").read_text().split("\n", 1)[0]
    assert header in page


def test_readme_links_into_the_site_resolve():
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert links, "the README links into docs/"
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert not missing, missing
