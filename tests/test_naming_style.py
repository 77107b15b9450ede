"""One naming style: every output's registry (CLI `--only`) name and every folder the
outputs write is kebab-case (`host-configs`, `cable-validation`), and no package holds two
modules whose names differ by a plural `s` (`fabric.py` beside `fabrics.py`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from compiler.render import RENDERERS

ROOT = Path(__file__).resolve().parent.parent
KEBAB = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def test_every_output_name_is_kebab_case():
    assert [name for name in RENDERERS if not KEBAB.fullmatch(name)] == []


def test_every_folder_the_outputs_write_is_kebab_case():
    # The committed examples' manifests list which output wrote which file.
    folders: dict[str, set[str]] = {}
    for manifest in sorted((ROOT / "out").glob("*/manifest.json")):
        for output, files in json.loads(manifest.read_text())["outputs"].items():
            for file in files:
                for folder in Path(file).parts[:-1]:
                    folders.setdefault(folder, set()).add(output)
    assert "host-configs" in folders and "cable-validation" in folders  # the manifests were read
    assert {f: sorted(o) for f, o in folders.items() if not KEBAB.fullmatch(f)} == {}


def test_manifests_name_outputs_as_the_registry_does():
    for manifest in sorted((ROOT / "out").glob("*/manifest.json")):
        outputs = json.loads(manifest.read_text())["outputs"]
        assert set(outputs) <= set(RENDERERS), manifest.parent.name


def test_no_package_holds_a_module_and_its_plural():
    near = []
    for package in sorted(p for p in (ROOT / "compiler").rglob("*") if p.is_dir() and p.name != "__pycache__"):
        names = {p.stem for p in package.glob("*.py")}
        near += [f"{package.relative_to(ROOT)}: {n}.py / {n}s.py" for n in sorted(names) if f"{n}s" in names]
    assert near == []
