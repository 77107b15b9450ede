"""A compile prints nothing on stderr that is not about the design: no library noise
(Fontconfig's warnings about the host's font configuration, from the Graphviz that
pygraphviz bundles), while real messages written to stderr still get through."""

from __future__ import annotations

import subprocess
import sys

from .conftest import ROOT, SPECS, run_cli


def test_compiling_the_readme_example_prints_nothing_on_stderr(tmp_path):
    # A fresh interpreter: Fontconfig reads its configuration once per process, when
    # Graphviz first lays out text (the diagrams), and that is when it complains.
    r = run_cli("compile", str(SPECS / "b200-superpod-4su.yaml"), "-o", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "Fontconfig" not in r.stderr
    assert r.stderr == "", r.stderr
    assert (tmp_path / "b200-superpod-4su" / "diagrams" / "fabric.svg").read_text().startswith("<?xml")


def test_only_fontconfig_lines_are_dropped():
    code = (
        "import os, sys\n"
        "from compiler.render.fontconfig_noise import without_fontconfig_noise\n"
        "with without_fontconfig_noise():\n"
        "    os.write(2, b'Fontconfig warning: \"/usr/share/fontconfig/conf.avail/05-reset-dirs-sample.conf\", '\n"
        "                b'line 6: unknown element \"reset-dirs\"\\n')\n"
        "    os.write(2, b'Error: syntax error in line 3 near x\\n')\n"
        "    os.write(2, b'Fontconfig error: Cannot load default config file\\n')\n"
        "print('done', file=sys.stderr)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "Error: syntax error in line 3 near x\ndone\n"
