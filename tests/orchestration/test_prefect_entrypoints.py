"""Every entrypoint of ``prefect.yaml`` loads the way a worker loads it, and leaves ``flows`` a package.

Prefect loads an entrypoint file as a script module named after the file's stem and
registers it in ``sys.modules`` under that name. A file called ``flows.py`` therefore
replaced the ``flows`` package in a deployed run, and the flow's first lazy
``from flows.… import …`` failed with "No module named 'flows.orchestration'" — every
deployed run died while the in-process tests passed. Loading in a fresh process from
another working directory is what a worker does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
TOP_PACKAGES = {"flows", "planner", "rules", "intents", "bench", "prefect"}


def _entrypoints() -> list[str]:
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8"))
    return sorted({d["entrypoint"] for d in config["deployments"]})


def test_no_entrypoint_file_is_named_like_a_top_level_package() -> None:
    for entry in _entrypoints():
        stem = Path(entry.split(":")[0]).stem
        assert stem not in TOP_PACKAGES, f"{entry}: Prefect would register it as the module {stem!r}"


def test_every_entrypoint_loads_in_a_fresh_process_and_flows_stays_a_package(tmp_path: Path) -> None:
    entries = [str(ROOT / e.split(":")[0]) + ":" + e.split(":")[1] for e in _entrypoints()]
    code = (
        "import json, sys\n"
        "from prefect.flows import load_flow_from_entrypoint\n"
        "names = [load_flow_from_entrypoint(e).name for e in json.loads(sys.argv[1])]\n"
        "import flows.authority.waking, flows.authority.choice\n"
        "print(json.dumps(names))\n"
    )
    p = subprocess.run([sys.executable, "-c", code, json.dumps(entries)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stderr[-2000:]
    names = json.loads(p.stdout.strip().splitlines()[-1])
    assert len(names) == len(entries) and all(names)
