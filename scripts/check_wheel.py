"""Check the built package as a user gets it: ``make wheel-check`` (after ``make wheel``) and ``.ci/run`` run it.

1. ``twine check --strict`` passes on the sdist and the wheel (the metadata PyPI shows).
2. The wheel holds every file of the package that git tracks (templates, static files, migrations, the bundled
   example) and nothing else.
3. The wheel, installed into a fresh virtual environment and run from an empty folder (never the source tree),
   says its version (the wheel's own), prints the demo leaderboard and scores a Label Studio export
   (``scripts/label_studio_example.py``), printing what it left out.

    python scripts/check_wheel.py [DIST_FOLDER]        # default dist/
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import venv
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "stableval"
#: The README's second command (the first installs the wheel): a Label Studio export's leaderboard.
SMOKE = ["score", "--from", "label-studio", "export.json"]


def package_files(repo: Path = REPO) -> set[str]:
    """The package's files as the wheel names them (``stableval/...``): those git tracks under ``src/`` (outside a
    git checkout, those under ``src/`` less Python's caches)."""
    if not (repo / ".git").exists():
        return {path.relative_to(repo / "src").as_posix() for path in (repo / "src" / PACKAGE).rglob("*")
                if path.is_file() and "__pycache__" not in path.parts}
    listed = subprocess.run(["git", "ls-files", "-z", f"src/{PACKAGE}"], cwd=repo, capture_output=True, text=True,
                            check=True).stdout
    return {name.removeprefix("src/") for name in listed.split("\0") if name}


def wheel_files(wheel: Path) -> set[str]:
    """The package's files inside a wheel (its ``.dist-info`` left aside)."""
    with zipfile.ZipFile(wheel) as archive:
        return {name for name in archive.namelist() if name.startswith(f"{PACKAGE}/")}


def contents_problems(expected: set[str], found: set[str]) -> list[str]:
    """What a wheel lacks or has too many, in words (empty: it holds exactly the package's files).

    >>> contents_problems({"stableval/a.py", "stableval/t.html"}, {"stableval/a.py", "stableval/x.pyc"})
    ['missing from the wheel: stableval/t.html', 'in the wheel but not in the package: stableval/x.pyc']
    """
    return ([f"missing from the wheel: {name}" for name in sorted(expected - found)]
            + [f"in the wheel but not in the package: {name}" for name in sorted(found - expected)])


def run(argv: list[str], cwd: Path, expect: tuple[str, ...] = ()) -> str:
    """Run a command, echoing it; fail on a non-zero exit or when an expected phrase is missing from its output."""
    print(f"$ {' '.join(str(word) for word in argv)}", flush=True)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": "", "COLUMNS": "160"})
    print(done.stdout + done.stderr, end="", flush=True)
    print(f"  ({time.perf_counter() - started:.1f} s)", flush=True)
    if done.returncode != 0:
        raise SystemExit(f"check_wheel: `{' '.join(map(str, argv))}` exited {done.returncode}")
    missing = [phrase for phrase in expect if phrase not in done.stdout + done.stderr]
    if missing:
        raise SystemExit(f"check_wheel: `{' '.join(map(str, argv))}` did not print {missing}")
    return done.stdout


def main(argv: list[str]) -> int:
    dist = Path(argv[0] if argv else REPO / "dist").resolve()
    wheels, sdists = sorted(dist.glob(f"{PACKAGE}-*.whl")), sorted(dist.glob(f"{PACKAGE}-*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        raise SystemExit(f"check_wheel: expected one wheel and one sdist in {dist}, found {wheels + sdists}")
    wheel = wheels[0]
    version = wheel.name.split("-")[1]
    run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdists[0])], cwd=REPO)
    problems = contents_problems(package_files(), wheel_files(wheel))
    if problems:
        raise SystemExit("check_wheel: the wheel's files are not the package's:\n" + "\n".join(problems))
    print(f"{wheel.name}: the package's {len(wheel_files(wheel))} files, no more, no fewer")

    with tempfile.TemporaryDirectory(prefix="stableval-wheel-") as scratch:
        root = Path(scratch)
        env, work = root / "venv", root / "work"
        work.mkdir()
        started = time.perf_counter()
        venv.EnvBuilder(with_pip=True).create(env)
        python, command = env / "bin" / "python", env / "bin" / PACKAGE
        run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)], cwd=work)
        where = run([python, "-c", f"import {PACKAGE}; print({PACKAGE}.__file__)"], cwd=work).strip()
        if not where.startswith(str(env)):
            raise SystemExit(f"check_wheel: {PACKAGE} was imported from {where}, not from the fresh venv")
        run([command, "--version"], cwd=work, expect=(f"{PACKAGE} {version}",))
        run([command, "demo"], cwd=work, expect=("gpt-4", "STABLEVAL"))
        run([python, str(REPO / "scripts" / "label_studio_example.py"), "export.json"], cwd=work)
        run([command, *SMOKE], cwd=work,
            expect=("model-a", "Leaderboard", "left out 1 skipped (cancelled) annotation(s)"))
        print(f"check_wheel: {wheel.name} installs and runs from a fresh venv "
              f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
