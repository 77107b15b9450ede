"""Hostile and random input: thousands of generated specs either compile to a plan that
passes every invariant, or fail with exit 2 and a clear message; never a traceback,
never a file outside the output folder, never a partial output folder."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import ROOT, cli_in_process, tree_bytes

HOSTILE_TEXT = st.sampled_from([
    "../../etc/passwd", "a/b", "x\ny", "x\r\nhostname evil", "q'uote", 'd"quote', "semi;colon", "sp ace",
    "ünïcødé", "\u202eevil", "", "-leading", "UPPER", "a" * 200, "nul\x00byte", "tab\tbed", "${HOME}", "{{ jinja }}",
])
NAME = st.one_of(st.from_regex(r"\A[a-z0-9][a-z0-9-]{0,20}\Z"), HOSTILE_TEXT, st.text(max_size=30), st.integers())
COUNT = st.one_of(st.integers(1, 300), st.integers(-10**12, 0), st.integers(4_194_305, 10**18),
                  st.floats(allow_nan=True), st.text(max_size=5), st.none(), st.lists(st.integers(), max_size=2))
SERVER = st.one_of(st.sampled_from(["dgx-h100", "dgx-b200", "dgx-b300", "hgx-h100", "mi300x-8", "gb200-nvl72",
                                    "gaudi3-8"]), NAME)
SWITCH = st.one_of(st.sampled_from(["qm9700", "qm9790", "q3400", "sn5600", "sn5400", "tomahawk5"]), NAME)
RATIO = st.one_of(st.sampled_from(["1:1", "2:1", "3:1", "1:2", "5:3", "7:1", "0:1", "1:0", "100:1"]),
                  st.integers(-3, 9), st.text(max_size=6), st.dictionaries(st.sampled_from(["leaf", "spine", "x"]),
                                                                          st.sampled_from(["1:1", "2:1", "z"]), max_size=2))
JUNK = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8)),
                    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                    max_leaves=10)

FABRIC = st.fixed_dictionaries(
    {"topology": st.one_of(st.sampled_from(["fat-tree", "rail-optimized"]), st.sampled_from(["torus", "mesh"]), NAME),
     "switch": SWITCH},
    optional={"tiers": st.one_of(st.sampled_from(["auto", 2, 3]), st.integers(-1, 9), st.text(max_size=4)),
              "oversubscription": RATIO,
              "scalable_unit": st.one_of(st.integers(1, 80), st.integers(-5, 0), st.integers(5000, 10**9)),
              "speed_gbps": st.sampled_from([100, 200, 400, 800, 0, -400, "400"]),
              "media": st.one_of(st.sampled_from(["mmf", "smf", "copper"]), st.dictionaries(NAME, NAME, max_size=2)),
              "bogus": JUNK})
ENDPOINT = st.fixed_dictionaries({"role": st.one_of(st.sampled_from(["ufm", "storage"]), NAME), "count": COUNT},
                                 optional={"ports": COUNT, "speed_gbps": COUNT})
SPEC = st.fixed_dictionaries(
    {"name": NAME, "server": SERVER, "fabric": st.one_of(FABRIC, JUNK)},
    optional={"servers": COUNT, "gpus": COUNT, "extra_endpoints": st.one_of(st.lists(ENDPOINT, max_size=3), JUNK),
              "requirements": st.one_of(JUNK, st.fixed_dictionaries({}, optional={
                  "min_bisection_gbps": COUNT, "max_hops": COUNT, "survive": st.dictionaries(
                      st.sampled_from(["spine", "leaf", "link", "min_bisection_fraction", "x"]), COUNT, max_size=3)})),
              "growth": st.one_of(JUNK, st.fixed_dictionaries({}, optional={"max_servers": COUNT})),
              "catalog": st.one_of(HOSTILE_TEXT, st.just("/etc/passwd")),
              "extra_key": JUNK})


def _listing(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _compile_and_judge(tmp_path, text: str):
    work = tmp_path / f"case-{abs(hash(text)) % 10**12}"
    work.mkdir(exist_ok=True)
    spec = work / "spec.yaml"
    spec.write_text(text, encoding="utf-8", errors="surrogatepass")
    out = work / "out"
    r = cli_in_process("compile", str(spec), "-o", str(out), "--only", "summary,cabling")
    assert r.returncode in (0, 1, 2), r
    assert "Traceback" not in r.stdout + r.stderr
    if r.returncode == 2:
        assert r.stderr.strip(), "exit 2 needs a message"
        assert "error" in r.stderr
        assert not out.exists() or _listing(out) == [], "nothing may be written for an invalid spec"
    else:
        # Exactly one folder, complete: no temp folders, no partial outputs, nothing elsewhere.
        assert [p.name for p in out.iterdir()] and all(not p.name.startswith(".") for p in out.iterdir())
        [folder] = list(out.iterdir())
        assert sorted(p.name for p in folder.iterdir()) == ["cabling.csv", "manifest.json", "summary.json"]
    assert _listing(work) in (["spec.yaml"], ["out", "spec.yaml"]) or _listing(work)[0] == "out"
    return r.returncode


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("CLUSTERC_FUZZ_EXAMPLES", "1500")), deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(spec=SPEC)
def test_random_specs(tmp_path_factory, spec):
    tmp = tmp_path_factory.mktemp("fuzz")
    text = yaml.safe_dump(spec, allow_unicode=True, sort_keys=False)
    _compile_and_judge(tmp, text)


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("CLUSTERC_FUZZ_EXAMPLES", "1500")) // 4, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(text=st.text(max_size=300))
def test_random_text(tmp_path_factory, text):
    _compile_and_judge(tmp_path_factory.mktemp("text"), text)


DEEP = "a: " + "[" * 200 + "]" * 200 + "\n"
WIDE = "name: x\nservers: 1\nserver: dgx-h100\nfabric: {topology: fat-tree, switch: qm9700}\nextra_key: [" + ",".join(["1"] * 60000) + "]\n"


@pytest.mark.parametrize("text", [DEEP, WIDE], ids=["deep-nesting", "sixty-thousand-values"])
def test_resource_bombs_fail_fast(tmp_path, text):
    t0 = time.perf_counter()
    assert _compile_and_judge(tmp_path, text) == 2
    assert time.perf_counter() - t0 < 5


def test_absurd_size_fails_before_allocating(tmp_path):
    # Within the schema limit but beyond three tiers: the error comes from arithmetic, not from building.
    text = "name: huge\nservers: 1048576\nserver: dgx-h100\nfabric: {topology: rail-optimized, switch: qm9700}\n"
    t0 = time.perf_counter()
    r = cli_in_process("validate", str(_write(tmp_path, text)))
    assert r.returncode == 2 and "three tiers of qm9700" in r.stderr
    assert time.perf_counter() - t0 < 3


def _write(tmp_path, text):
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return p


BIG = """name: killme
gpus: {gpus}
server: dgx-h100
fabric: {{topology: rail-optimized, switch: sn5600, speed_gbps: 400}}
"""


def _digest(folder: Path) -> dict[str, str]:
    """Every file below `folder` by relative path -> sha256 (a failed comparison of 50 MB
    trees would otherwise make pytest diff the bytes for minutes)."""
    return {k: hashlib.sha256(v).hexdigest() for k, v in tree_bytes(folder).items()}


@pytest.mark.slow
def test_killing_a_compile_leaves_previous_output(tmp_path):
    """A compile killed at any moment leaves the previous output or, if the swap already
    happened, the complete new one: never a mix, never a half-written folder."""
    out = tmp_path / "out"
    spec = _write(tmp_path, BIG.format(gpus=4096))
    r = subprocess.run([sys.executable, "-m", "compiler.cli", "compile", str(spec), "-o", str(out)],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    before = _digest(out / "killme")
    spec.write_text(BIG.format(gpus=65536))
    r = subprocess.run([sys.executable, "-m", "compiler.cli", "compile", str(spec), "-o", str(tmp_path / "ref")],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    after = _digest(tmp_path / "ref" / "killme")
    assert after != before
    kept_previous = 0
    for delay in (0.3, 1.0, 2.0, 3.0, 4.5):
        if _digest(out / "killme") == after:
            break  # an earlier kill came after the swap: nothing older is left to protect
        proc = subprocess.Popen([sys.executable, "-m", "compiler.cli", "compile", str(spec), "-o", str(out)],
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        if proc.poll() is not None:
            break  # finished before the kill: nothing left to test at this delay
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        now = _digest(out / "killme")
        assert now in (before, after), f"killed after {delay}s: output is neither the previous nor the new one"
        kept_previous += now == before
    assert kept_previous >= 1, "no kill landed before the swap: the test did not exercise the atomic write"
    # The next compile cleans up whatever a killed one left and completes.
    r = subprocess.run([sys.executable, "-m", "compiler.cli", "compile", str(spec), "-o", str(out)],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert [p.name for p in out.iterdir()] == ["killme"]
    assert _digest(out / "killme") == after
