"""Long runs: the progress view on a terminal (and none in a pipe or with --quiet), the memory
ceiling ending in `inconclusive: memory limit`, and --help describing every option.

The progress tests run the CLI in a fresh interpreter whose stderr is a pseudo-terminal, as a
person's shell would have it."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from volta.cli import main

ROOT = Path(__file__).resolve().parent.parent
VECTOR_ADD = ROOT / "examples" / "vector_add.ptx"


def _spec(tmp_path: Path, ctas: int) -> Path:
    n = 128 * ctas
    spec = {"grid": [ctas], "block": [128], "params": ["x", "y", "out", n, 0, 0],
            "buffers": {b: {"dtype": "float32", "shape": [n]} for b in ("x", "y", "out")}}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    return path


def _on_a_terminal(*args: str, timeout: float = 300) -> tuple[int, str, str]:
    """(exit code, stdout, what the terminal showed on stderr)."""
    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS="160", TERM="xterm-256color", PYTHONPATH=str(ROOT))
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "volta.cli", *args], stdin=slave, stdout=subprocess.PIPE,
                            stderr=slave, env=env, cwd=ROOT)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        shown += chunk
    out = proc.stdout.read().decode()
    proc.wait(timeout=timeout)
    os.close(master)
    return proc.returncode, out, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode(errors="replace"))


@pytest.mark.slow
def test_progress_on_a_terminal(tmp_path):
    spec = _spec(tmp_path, 1500)
    code, out, shown = _on_a_terminal("check", str(VECTOR_ADD), "--launch", str(spec), "--grid", "enumerate")
    assert code == 0 and "race_free" in out
    assert "/1500 CTAs" in shown and "instr/s" in shown and "MiB" in shown, shown[-500:]
    assert "1500/1500 CTAs" in shown
    code, out, shown = _on_a_terminal("check", str(VECTOR_ADD), "--launch", str(spec), "--grid", "enumerate",
                                      "--quiet")
    assert code == 0 and "CTAs" not in shown


def test_no_progress_in_a_pipe(tmp_path):
    spec = _spec(tmp_path, 200)
    r = subprocess.run([sys.executable, "-m", "volta.cli", "check", str(VECTOR_ADD), "--launch", str(spec), "--grid",
                        "enumerate"], capture_output=True, text=True, cwd=ROOT, timeout=300,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 0 and r.stderr == "", r.stderr


@pytest.mark.slow
def test_memory_ceiling_is_inconclusive(tmp_path):
    """Enumerating 3000 CTAs keeps an access log of several hundred MiB: under a 300M ceiling the
    check stops with an inconclusive verdict instead of taking the machine's memory."""
    spec = _spec(tmp_path, 3000)
    r = subprocess.run([sys.executable, "-m", "volta.cli", "check", str(VECTOR_ADD), "--launch", str(spec), "--grid",
                        "enumerate", "--max-memory", "300M", "--json"], capture_output=True, text=True, cwd=ROOT,
                       timeout=600, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 3, r.stdout + r.stderr
    report = json.loads(r.stdout)
    assert report["verdict"].startswith("inconclusive: memory limit of 300 MiB reached"), report["verdict"]


def test_memory_size_option():
    from volta.progress import MemorySize

    size = MemorySize()
    assert size.convert("8G", None, None) == 8 * 2**30
    assert size.convert("500M", None, None) == 500 * 2**20
    assert size.convert("1.5GiB", None, None) == int(1.5 * 2**30)
    for bad in ("lots", "-1G", "10"):
        with pytest.raises(click.BadParameter):
            size.convert(bad, None, None)


# ---------------------------------------------------------------- --help
def _commands(group: click.Group, prefix=()):
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, prefix + (name,))
        else:
            yield prefix + (name,), cmd


def test_every_option_has_help():
    missing = [f"{' '.join(path)} {p.opts[0]}" for path, cmd in _commands(main) for p in cmd.params
               if isinstance(p, click.Option) and not p.help]
    assert not missing, missing


def test_check_help_says_exit_codes_and_where_the_launch_comes_from():
    from click.testing import CliRunner

    text = CliRunner().invoke(main, ["check", "--help"]).output
    for needle in ("Exit codes: 0 proved, 1 a bug was found, 2 bad input, 3", "// launch:", "KERNEL.json",
                   "--max-memory", "--html", "--instance", "worst wins"):
        assert needle in text, needle
