"""`clusterc ci` and the README's workflow and pre-commit commands, run on a scratch git repo."""

from __future__ import annotations

import re
import subprocess

from .conftest import ROOT, cli_in_process

SPEC = """name: pr-demo
servers: {servers}
server: dgx-h100
fabric: {{topology: rail-optimized, switch: qm9700, scalable_unit: 32}}
{extra}"""


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})


def _repo(tmp_path, servers=64, extra=""):
    repo = tmp_path / "specs-repo"
    (repo / "specs").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "specs" / "pod.yaml").write_text(SPEC.format(servers=servers, extra=extra))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    return repo


def _workflow_commands() -> list[str]:
    """The `run:` lines of the README's GitHub Actions workflow that call clusterc."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("name: clusterc\non: pull_request", 1)[1].split("```", 1)[0]
    return [m.group(1) for m in re.finditer(r"- run: (clusterc .*)", block)]


def test_readme_workflow_command_passes_when_no_cable_moves(tmp_path):
    repo = _repo(tmp_path, 64, "growth: {max_servers: 128}\n")
    (repo / "specs" / "pod.yaml").write_text(SPEC.format(servers=96, extra="growth: {max_servers: 128}\n"))
    [command] = _workflow_commands()
    args = command.replace("origin/${{ github.base_ref }}", "main").split()[1:]
    args = [str(repo / "specs" / "pod.yaml") if a == "specs/*.yaml" else a for a in args]
    args = [str(tmp_path / "clusterc.md") if a == "clusterc.md" else a for a in args]
    r = cli_in_process(*args)
    assert r.returncode == 0, r.stdout + r.stderr
    md = (tmp_path / "clusterc.md").read_text()
    assert "checks passed" in md and "**No pulled cable moves.**" in md


def test_ci_fails_when_cables_move(tmp_path):
    repo = _repo(tmp_path, 64)
    (repo / "specs" / "pod.yaml").write_text(SPEC.format(servers=96, extra=""))
    r = cli_in_process("ci", str(repo / "specs" / "pod.yaml"), "--against", "main", "--fail-on", "removed,changed")
    assert r.returncode == 1
    assert "must be removed or re-plugged" in r.stdout


def test_ci_fails_on_requirement_and_reports_it(tmp_path):
    repo = _repo(tmp_path, 64)
    (repo / "specs" / "pod.yaml").write_text(SPEC.format(servers=64, extra="requirements: {max_hops: 1}\n"))
    r = cli_in_process("ci", str(repo / "specs" / "pod.yaml"), "--against", "main")
    assert r.returncode == 1 and "HOPS_ABOVE_LIMIT" in r.stdout


def test_ci_new_spec_and_invalid_spec(tmp_path):
    repo = _repo(tmp_path, 64)
    (repo / "specs" / "new.yaml").write_text(SPEC.format(servers=32, extra="").replace("pr-demo", "new-pod"))
    r = cli_in_process("ci", str(repo / "specs" / "new.yaml"), "--against", "main")
    assert r.returncode == 0 and "New spec" in r.stdout
    (repo / "specs" / "pod.yaml").write_text("name: pr-demo\nservers: lots\n")
    r = cli_in_process("ci", str(repo / "specs" / "pod.yaml"), "--against", "main")
    assert r.returncode == 2 and "invalid" in r.stdout
    r = cli_in_process("ci", str(repo / "specs" / "new.yaml"), "--against", "no-such-ref")
    assert r.returncode == 2 and "git ref 'no-such-ref' not found" in r.stderr


def test_readme_precommit_hook_entry(tmp_path):
    readme = (ROOT / "README.md").read_text()
    entry = re.search(r"entry: (clusterc \w+)", readme).group(1)
    good = tmp_path / "good.yaml"
    good.write_text(SPEC.format(servers=32, extra=""))
    bad = tmp_path / "bad.yaml"
    bad.write_text(SPEC.format(servers=32, extra="").replace("qm9700", "qm9000"))
    assert cli_in_process(*entry.split()[1:], str(good)).returncode == 0
    assert cli_in_process(*entry.split()[1:], str(good), str(bad)).returncode == 2
