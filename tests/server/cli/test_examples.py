"""The README's ``sluice run`` example as it is written: its command line, on the files shipped
in examples/, prints the README's result line (in this process, on the suite's SparkSession)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from server.cli.main import main

ROOT = Path(__file__).resolve().parents[3]


def readme_example() -> tuple[list[str], list[str]]:
    """The example's arguments after ``sluice``, and the lines the README shows it printing."""
    text = (ROOT / "README.md").read_text()
    (block,) = re.findall(r"```sh\n *\.venv/bin/sluice (run .*?)\n(.*?)```", text, flags=re.S)
    command, printed = block
    return shlex.split(command), [line.strip() for line in printed.splitlines() if line.strip()]


def test_the_readme_run_example_prints_what_the_readme_shows(spark, monkeypatch, capsys):
    args, printed = readme_example()
    monkeypatch.chdir(ROOT)
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines() == printed
