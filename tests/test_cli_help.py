"""Help as a newcomer asks for it: ``python -m hdvqa`` alone, ``--help`` and ``-h`` on every command."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from hdvqa.cli.main import COMMANDS, main


def run_main(args, capsys) -> tuple[int, str, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_bare_command_prints_usage_to_stderr_and_exits_2(tmp_path):
    """As argparse tools do: no command is a usage error (it once printed the usage and exited 0)."""
    run = subprocess.run([sys.executable, "-m", "hdvqa"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("usage: python -m hdvqa <command>") and all(name in run.stderr for name in COMMANDS)


@pytest.mark.parametrize("flag", ["--help", "-h", "help"])
def test_help_prints_usage_and_exits_0(flag, capsys):
    code, out, err = run_main([flag], capsys)
    assert code == 0 and err == ""
    assert out.startswith("usage: python -m hdvqa <command>")
    for name, (_, _, text) in COMMANDS.items():
        assert f"  {name}" in out and text in out


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_help(command, flag, capsys, tmp_path, monkeypatch):
    """``<command> --help`` prints that command's usage and exits 0, doing nothing else (``list
    --help`` once listed prototypes; ``demo --help`` was an unknown option, exit 2)."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main([command, flag], capsys)
    assert code == 0, err
    assert out.startswith(f"usage: python -m hdvqa {command}"), out[:200]
    assert list(tmp_path.iterdir()) == [], "help wrote files"


def test_help_command_names_a_command(capsys):
    code, out, _ = run_main(["help", "demo"], capsys)
    assert code == 0 and out.startswith("usage: python -m hdvqa demo") and "force" in out


def test_command_table_entries_resolve():
    """Each entry of the table others add to: (module, function, one-line help)."""
    for name, (module, function, text) in COMMANDS.items():
        assert callable(getattr(importlib.import_module(module), function)), name
        assert text and "\n" not in text, name


@pytest.mark.parametrize(
    "args, message",
    [
        (["dmeo"], "unknown command 'dmeo'; did you mean 'demo'?"),
        (["demo", "out=x", "partcipants=3"], "unknown option 'partcipants=3'; did you mean 'participants'?"),
        (["list", "extra"], "unknown option 'extra'"),
        (["demo", "out=x", "scale=huge"], "scale must be one of demo, hd_epic"),
    ],
)
def test_mistakes_are_one_line_exit_2(args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(args, capsys)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []
