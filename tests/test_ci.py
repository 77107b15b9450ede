"""`clusterc ci` and the CI guide's (docs/how-to/ci.md) workflow and pre-commit commands, run on a scratch git repo.

`clusterc ci` is compiler/ci.py."""

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
    """The `run:` lines of the CI guide's GitHub Actions workflow that call clusterc."""
    readme = (ROOT / "docs" / "how-to" / "ci.md").read_text()
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
    assert r.returncode == 0 and "New spec" in r.stdout and "all of it is added: 44 devices, 512 cables" in r.stdout
    r = cli_in_process("ci", str(repo / "specs" / "new.yaml"), "--against", "main", "--fail-on", "added")
    assert r.returncode == 1 and "Gate hit: added." in r.stdout  # as a deleted spec is a removal
    (repo / "specs" / "pod.yaml").write_text("name: pr-demo\nservers: lots\n")
    r = cli_in_process("ci", str(repo / "specs" / "pod.yaml"), "--against", "main")
    assert r.returncode == 2 and "invalid" in r.stdout
    r = cli_in_process("ci", str(repo / "specs" / "new.yaml"), "--against", "no-such-ref")
    assert r.returncode == 2 and "git ref 'no-such-ref' not found" in r.stderr


def test_readme_precommit_hook_entry(tmp_path):
    readme = (ROOT / "docs" / "how-to" / "ci.md").read_text()
    entry = re.search(r"entry: (clusterc \w+)", readme).group(1)
    good = tmp_path / "good.yaml"
    good.write_text(SPEC.format(servers=32, extra=""))
    bad = tmp_path / "bad.yaml"
    bad.write_text(SPEC.format(servers=32, extra="").replace("qm9700", "qm9000"))
    assert cli_in_process(*entry.split()[1:], str(good)).returncode == 0
    assert cli_in_process(*entry.split()[1:], str(good), str(bad)).returncode == 2


def _commit(repo, message="change"):
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", message)


def test_ci_builds_the_old_version_from_the_whole_tree(tmp_path):
    """The spec reads a price file outside specs/: the version at the ref is built with the
    ref's price file, so losing a server is a removal (the diff shows the cost change too)."""
    prices = "bom: {prices: ../prices/p.yaml}\n"
    repo = _repo(tmp_path, 64, prices)
    (repo / "prices").mkdir()
    (repo / "prices" / "p.yaml").write_text("currency: USD\nparts: {MQM9700-NS2F: 30000}\n")
    _commit(repo)
    (repo / "specs" / "pod.yaml").write_text(SPEC.format(servers=63, extra=prices))
    (repo / "prices" / "p.yaml").write_text("currency: USD\nparts: {MQM9700-NS2F: 25000}\n")
    r = cli_in_process("ci", str(repo / "specs" / "pod.yaml"), "--against", "main", "--fail-on", "removed,changed,physical")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "**Gate hit: removed**" in r.stdout and "| devices | 0 | 1 |" in r.stdout
    # 16 leaves + 8 spines at 30,000 at the ref, at 25,000 now
    assert "cost USD 720000.00 -> USD 600000.00 (-120000.00)" in r.stdout


def test_ci_old_version_that_does_not_compile_is_an_error(tmp_path):
    repo = _repo(tmp_path, 64, "catalog: ../catalogs/mine.yaml\n")  # the ref names a catalog it never committed
    (repo / "specs" / "pod.yaml").write_text(SPEC.format(servers=32, extra=""))
    r = cli_in_process("ci", str(repo / "specs" / "pod.yaml"), "--against", "main", "--fail-on", "removed")
    assert r.returncode == 2
    assert "The version at `main` (`specs/pod.yaml`) does not compile" in r.stdout
    assert "main:catalogs/mine.yaml: error: cannot read" in r.stderr  # where, as of the ref


def test_ci_follows_renames_and_reports_deleted_specs(tmp_path):
    """`git mv` and a cut from 64 to 48 servers is diffed against the old name; a deleted
    spec removes all it held (gated by `removed`); a price file among the specs is skipped."""
    repo = _repo(tmp_path, 64)
    (repo / "specs" / "small.yaml").write_text(SPEC.format(servers=32, extra="").replace("pr-demo", "small"))
    _commit(repo)
    _git(repo, "mv", "specs/pod.yaml", "specs/renamed.yaml")
    (repo / "specs" / "renamed.yaml").write_text(SPEC.format(servers=48, extra=""))
    _git(repo, "rm", "-q", "specs/small.yaml")
    (repo / "specs" / "prices.yaml").write_text("currency: USD\nparts: {MQM9700-NS2F: 30000}\n")
    _commit(repo)
    specs = sorted(str(p) for p in (repo / "specs").glob("*.yaml"))
    r = cli_in_process("ci", *specs, "--against", "main~1", "--fail-on", "removed")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Renamed from `specs/pod.yaml`" in r.stdout and "New spec" not in r.stdout
    assert "| devices | 0 | 16 |" in r.stdout  # 16 servers fewer
    assert "### `specs/small.yaml`: deleted" in r.stdout
    assert "**All of `small` is removed: 44 devices, 512 cables.**" in r.stdout  # 32 servers, 8 leaves, 4 spines; 256 + 256 cables
    assert "prices.yaml`: skipped" in r.stdout and "not a spec" in r.stdout
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True)
    assert status.stdout == ""  # the ref was checked out through a private index: the user's is untouched
    (repo / "specs" / "renamed.yaml").write_text(SPEC.format(servers=64, extra=""))
    r = cli_in_process("ci", *specs, "--against", "main~1", "--fail-on", "removed")
    assert r.returncode == 1 and "Gate hit: removed." in r.stdout  # the deletion alone trips the gate
    assert cli_in_process("ci", *specs, "--against", "main~1").returncode == 0


def test_ci_gates_a_switch_model_change(tmp_path):
    repo = _repo(tmp_path, 64)
    (repo / "specs" / "pod.yaml").write_text(SPEC.format(servers=64, extra="").replace("qm9700", "qm9790"))
    r = cli_in_process("ci", str(repo / "specs" / "pod.yaml"), "--against", "main", "--fail-on", "removed,changed,physical")
    assert r.returncode == 1 and "| devices | 0 | 0 | 24 |" in r.stdout and "Gate hit: changed" in r.stdout
