"""A Spark standalone master and worker on loopback, started with pyspark's own
``spark-class``, sharing a secret with the servers the tests start; and a Python for the
executors that has Sluice's dependencies but not Sluice, so the code must travel."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import sysconfig
from pathlib import Path

from serverkit import free_port, wait_until

SPARK_HOME = Path(__import__("pyspark").__file__).parent


class Standalone:
    """A master and one worker, each a child process in its own process group."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.secret = secrets.token_urlsafe(32)
        self.port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.properties = root / "spark.conf"
        self.properties.write_text(
            f"spark.authenticate true\nspark.authenticate.secret {self.secret}\n"
            "spark.master.rest.enabled false\n"
        )
        self.processes: list[subprocess.Popen] = []
        self.python: str | None = None  # what executors run; set by whoever starts it

    def settings(self) -> dict[str, str | None]:
        """What a ``sluice serve`` needs to run its diagrams here."""
        return {"spark_master": self.url, "spark_secret": self.secret, "spark_python": self.python}

    def _daemon(self, name: str, cls: str, *args: str, ready: str) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON")}
        env |= {"SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1"}
        log = self.root / f"{name}.log"
        with open(log, "wb") as out:
            self.processes.append(
                subprocess.Popen(
                    [str(SPARK_HOME / "bin" / "spark-class"), cls, *args],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,
                )
            )
        process = self.processes[-1]

        def up() -> bool:
            assert process.poll() is None, f"the Spark {name} exited:\n{log.read_text()[-3000:]}"
            return re.search(ready, log.read_text()) is not None

        wait_until(up, 120, f"the Spark {name}")

    def start(self) -> None:
        common = ("--host", "127.0.0.1", "--properties-file", str(self.properties))
        self._daemon(
            "master",
            "org.apache.spark.deploy.master.Master",
            *common,
            "--port",
            str(self.port),
            "--webui-port",
            str(free_port()),
            ready="elected leader",
        )
        self._daemon(
            "worker",
            "org.apache.spark.deploy.worker.Worker",
            *common,
            "--cores",
            "2",
            "--memory",
            "3g",
            "--webui-port",
            str(free_port()),
            "--work-dir",
            str(self.root / "work"),
            self.url,
            ready="Successfully registered with master",
        )

    def stop(self) -> None:
        for process in reversed(self.processes):
            os.killpg(process.pid, 9)
            process.wait()


def bare_python(root: Path) -> str:
    """A virtual environment whose only path entry is this environment's site-packages
    directory, read as a plain directory: its ``.pth`` files (the editable install of Sluice
    among them) are not run, so Sluice's modules are importable only from the shipped code."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    purelib = Path(sysconfig.get_paths(vars={"base": str(root), "platbase": str(root)})["purelib"])
    (purelib / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    python = root / "bin" / "python"
    probe = subprocess.run(
        [str(python), "-c", "import pyarrow, pyspark, pandas; import boxes"],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        cwd=root,
    )
    assert "No module named 'boxes'" in probe.stderr, probe.stderr
    return str(python)
