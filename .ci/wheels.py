"""Every distribution built as a package index gets it, checked, and installed from the wheels alone.

    uv run python .ci/wheels.py [--keep DIR]

1. `uv build` of core/ and every plugins/*/ (the sdist, then the wheel from the unpacked sdist;
   the host's carries plugin-template/), of plugin-template/ itself, and of a plugin rendered by
   `fsmcp new-plugin` from the host's wheel;
2. the metadata of each (licence, classifiers, Requires-Python, a Markdown readme that links
   nothing on this machine) and `twine check --strict` (twine from the package index, in a
   virtual environment of its own);
3. fresh virtual environments from the built wheels: the host and one plugin, then the host and
   two, then `fsmcp[all]` from the wheel directory (`--find-links`): `fsmcp tools` offers exactly
   the tools the development environment offers for those plugins, and `fsmcp serve` answers a
   real MCP client (.ci/client.py, the `mcp` SDK installed beside fsmcp).

A new family under plugins/ is picked up by the glob below; its place in `fsmcp[all]` is the one
line in core/pyproject.toml.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from email.parser import HeaderParser
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DISTRIBUTIONS = [REPO / "core", *sorted(p for p in (REPO / "plugins").iterdir() if (p / "pyproject.toml").is_file())]
ONE = ["read"]
TWO = ["read", "write"]
# A link in a readme that a package index shows resolves against the index's page: only web
# addresses and anchors mean anything there.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
started = time.monotonic()


def say(text: str) -> None:
    print(f"wheels: [{time.monotonic() - started:6.1f}s] {text}", flush=True)


def run(*command: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=ENV, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"wheels: FAILED {' '.join(map(str, command))}\n{done.stdout}\n{done.stderr}")
    return done.stdout


def build(project: Path, out: Path) -> None:
    run("uv", "build", "--quiet", "--out-dir", out, project)


def check_metadata(artifact: Path) -> str:
    """The problems with one wheel's or sdist's metadata, or ''."""
    if artifact.suffix == ".whl":
        with zipfile.ZipFile(artifact) as whl:
            names = whl.namelist()
            (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
            raw = whl.read(metadata).decode()
    else:
        with tarfile.open(artifact) as sdist:
            names = sdist.getnames()
            (pkg_info,) = [n for n in names if n.count("/") == 1 and n.endswith("/PKG-INFO")]
            raw = sdist.extractfile(pkg_info).read().decode()  # type: ignore[union-attr]
    meta = HeaderParser().parsestr(raw)
    problems = []
    if meta["License-Expression"] != "MIT":
        problems.append(f"License-Expression {meta['License-Expression']!r}")
    licence_files = meta.get_all("License-File") or []
    if not licence_files or not any(n.endswith("/" + f) or n.endswith("licenses/" + f) for f in licence_files for n in names):
        problems.append(f"licence file {licence_files} not in the archive")
    if not meta.get("Requires-Python"):
        problems.append("no Requires-Python")
    if not meta.get_all("Classifier"):
        problems.append("no classifiers")
    if meta["Description-Content-Type"] != "text/markdown":
        problems.append(f"Description-Content-Type {meta['Description-Content-Type']!r}")
    readme = meta.get_payload()
    if len(readme.strip()) < 100:
        problems.append("no readme")
    for url in meta.get_all("Project-URL") or []:
        if not url.split(",", 1)[-1].strip().startswith("https://"):
            problems.append(f"Project-URL {url!r}")
    for target in LINK.findall(readme):
        if not target.startswith(("https://", "#")):
            problems.append(f"readme link {target!r} means nothing on a package index")
    return "; ".join(problems)


def venv(path: Path, *install: str | Path) -> Path:
    run("uv", "venv", "--quiet", "--python", sys.executable, path)
    run("uv", "pip", "install", "--quiet", "--python", path / "bin" / "python", *install)
    return path / "bin"


def tools(fsmcp: list[str | Path], root: Path, *options: str) -> dict[str, str]:
    """`fsmcp tools` as {tool: plugin} (each line ends with the definition's size)."""
    return dict(line.split()[:2] for line in run(*fsmcp, "tools", root, *options).splitlines())


def expected(root: Path, plugins: list[str]) -> dict[str, str]:
    """What the development environment, with every family installed, offers for these plugins."""
    offered = tools([sys.executable, "-m", "fsmcp"], root, "--enable", ",".join(plugins))
    assert set(offered.values()) == set(plugins), f"the development environment has no plugin {set(plugins) - set(offered.values())}"
    return offered


def client(bin_: Path, root: Path, calls: list) -> dict:
    here = Path(__file__).resolve().parent
    return json.loads(run(bin_ / "python", here / "client.py", json.dumps(calls), "--", bin_ / "fsmcp", "serve", root))


def main() -> int:
    keep = Path(sys.argv[sys.argv.index("--keep") + 1]) if "--keep" in sys.argv else None
    work = Path(tempfile.mkdtemp(prefix="fsmcp-wheels-"))
    try:
        dist, probe_dist, root = work / "dist", work / "probe-dist", work / "root"
        root.mkdir()
        (root / "hello.txt").write_text("hello from a wheel\n")
        for project in DISTRIBUTIONS:
            build(project, dist)
        wheels = {w.name.split("-")[0].replace("_", "-"): w for w in dist.glob("*.whl")}
        say(f"built {len(wheels)} distributions, sdist then wheel: {', '.join(sorted(wheels))}")
        assert len(wheels) == len(DISTRIBUTIONS) == len(list(dist.glob("*.tar.gz"))), sorted(p.name for p in dist.iterdir())

        host = venv(work / "host", wheels["fsmcp"])
        run(host / "fsmcp", "new-plugin", "ci_probe", "--dir", work)
        build(REPO / "plugin-template", probe_dist)
        build(work / "fsmcp-ci-probe", probe_dist)
        artifacts = sorted(p for d in (dist, probe_dist) for p in d.iterdir() if p.name.endswith((".whl", ".tar.gz")))
        say("plugin-template/, and fsmcp new-plugin ci_probe from the host's wheel, built: " + ", ".join(p.name for p in artifacts if p.parent == probe_dist))

        problems = {a.name: p for a in artifacts if (p := check_metadata(a))}
        if problems:
            raise SystemExit("wheels: FAILED metadata:\n" + "\n".join(f"  {k}: {v}" for k, v in problems.items()))
        twine = venv(work / "twine", "twine")
        checked = run(twine / "twine", "check", "--strict", *artifacts)
        say(f"twine check --strict: {checked.count('PASSED')} of {len(artifacts)} PASSED; metadata of each checked")
        if checked.count("PASSED") != len(artifacts):
            raise SystemExit(f"wheels: FAILED twine check\n{checked}")

        for plugins, calls in [
            (ONE, [["read_file", {"path": "hello.txt"}]]),
            (TWO, [["write_file", {"path": "new.txt", "content": "written"}], ["read_file", {"path": "new.txt"}]]),
        ]:
            bin_ = venv(work / "-".join(plugins), wheels["fsmcp"], *(wheels[f"fsmcp-{p}"] for p in plugins))
            want = expected(root, plugins)
            got = tools([bin_ / "fsmcp"], root)
            assert got == want, f"fsmcp + {plugins}: fsmcp tools offers {got}, not {want}"
            answered = client(bin_, root, calls)
            assert answered["tools"] == sorted(want), answered["tools"]
            assert not any(c["isError"] for c in answered["calls"]), answered["calls"]
            last = answered["calls"][-1]["text"]
            assert last in ("hello from a wheel\n", "written"), last
            say(f"fsmcp + {' + '.join(plugins)} from wheels: fsmcp tools offers exactly their {len(got)} tools; "
                f"fsmcp serve answered tools/list and {', '.join(c['tool'] for c in answered['calls'])}")  # fmt: skip

        bin_ = venv(work / "all", "--find-links", dist, "fsmcp[all]")
        installed = {p["name"]: p["version"] for p in json.loads(run("uv", "pip", "list", "--python", bin_ / "python", "--format", "json"))}
        ours = {name: version for name, version in installed.items() if name.startswith("fsmcp")}
        assert ours == {name: wheel.name.split("-")[1] for name, wheel in wheels.items()}, ours
        families = [p.name for p in DISTRIBUTIONS[1:]]
        want, got = expected(root, families), tools([bin_ / "fsmcp"], root)
        assert got == want, f"fsmcp[all] offers {got}, not {want}"
        answered = client(bin_, root, [["read_file", {"path": "hello.txt"}]])
        assert answered["tools"] == sorted(want) and not answered["calls"][0]["isError"], answered
        say(f'uv pip install --find-links DIR "fsmcp[all]": {len(ours)} distributions, {len(got)} tools '
            f"from {len(set(got.values()))} plugins; fsmcp serve answered")  # fmt: skip
        if keep:
            keep.mkdir(parents=True, exist_ok=True)
            for artifact in artifacts:
                shutil.copy2(artifact, keep)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
