"""Every script of benchmarks/ starts in the test command's venv: `--help` exits 0 and prints its usage.

That venv (`pip install -e ".[test,distributed,libraries]"`) has opacus, whose wheel installs a top-level
`benchmarks` package, and diffprivlib, whose wheel installs a top-level `tests`: a script imports its
siblings by module name from its own folder (first on sys.path when a script runs) and puts the
repository root after that folder (for `tests.*`), so neither shadows ours. Each script runs as its own
process, as a user runs it, four at a time."""

import concurrent.futures
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))


def _help(script: pathlib.Path) -> str | None:
    """None when `python script --help` exits 0 with a usage line, else the last line it printed."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, str(script), "--help"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=300)
    if result.returncode == 0 and result.stdout.startswith("usage:"):
        return None
    return (result.stderr.strip() or result.stdout.strip() or f"exit {result.returncode}").splitlines()[-1]


def test_every_benchmark_script_answers_help():
    assert len(SCRIPTS) >= 20
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        answers = dict(zip((s.name for s in SCRIPTS), pool.map(_help, SCRIPTS)))
    assert {name: last for name, last in answers.items() if last is not None} == {}
