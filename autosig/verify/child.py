"""Bootstrap of a verification run, imported in every Python process of the workload.

``autosig verify`` names this module in ``$AUTOSIG_BOOTSTRAP``, so the profiler's
``sitecustomize`` imports it before the recorder starts. Driven by one JSON file named
in ``$AUTOSIG_VERIFY_CONFIG``::

    {"sources": "<json file: abs path -> rewritten text>" | null,
     "jit_files": [abs paths whose tf.functions get jit_compile=True] | null,
     "watch_files": [abs paths whose tf.function calls are timed],
     "xla_dump": "<dir>" | null, "xla_names": [function names to dump],
     "seed": int | null, "status_dir": "<dir>"}

It seeds Python, NumPy and TensorFlow alike in both runs (so an unseeded workload
draws the same data), installs the import hook (rewritten runs), the jit_compile
forcing (XLA runs), times the steps of the watched functions,
points XLA's module dump at a per-process directory (compile counting), watches
that ``run_functions_eagerly`` stays off (it bypasses signatures, which would make
the verification meaningless), and at exit writes a status file saying what this
process really did: modules served rewritten, functions forced to XLA, the GPUs
TensorFlow saw, whether functions ran eagerly. No TensorFlow import here.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
from pathlib import Path
from typing import Any

from autosig.verify import effects, import_hook, unseen, xla

ENV_CONFIG = "AUTOSIG_VERIFY_CONFIG"


def _status(config: dict[str, Any]) -> dict[str, Any]:
    finder = import_hook.installed()
    tf = sys.modules.get("tensorflow")
    gpus: list[str] = []
    if tf is not None:
        try:
            gpus = [d.name for d in tf.config.list_physical_devices("GPU")]
        except Exception:  # noqa: BLE001 - at exit TensorFlow may be half torn down
            gpus = []
    return {
        "pid": os.getpid(),
        "argv": list(sys.argv),
        "served": sorted(set(finder.served)) if finder is not None else [],
        "jit_forced": list(xla.FORCED),
        "xla_fallback": [
            {"file": f, "qualname": q, "line": line, "why": why}
            for (f, q, line), why in xla.FALLBACK.items()
        ],
        "functions_run_eagerly": bool(xla.EAGER_SEEN) or xla.functions_run_eagerly(),
        "tensorflow_loaded": tf is not None,
        "gpus": gpus,
        "timings": [
            {"file": f, "qualname": q, "line": line, "seconds": times}
            for (f, q, line), times in xla.TIMINGS.items()
        ],
    }


def _write_status(config: dict[str, Any]) -> None:
    directory = config.get("status_dir")
    if not directory:
        return
    try:
        data = _status(config)
        effects.write(directory)
        unseen.write(directory)
        path = Path(directory) / f"status-{os.getpid()}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
    except Exception as exc:  # noqa: BLE001 - never break the user's exit
        print(f"autosig: verify status not written: {exc!r}", file=sys.stderr)


def _seed_python(seed: int) -> None:
    """Both runs start from the same Python and NumPy random state (unseeded workloads)."""
    import random

    random.seed(seed)
    try:
        import numpy as np
    except ImportError:
        return
    np.random.seed(seed)


def activate() -> None:
    path = os.environ.get(ENV_CONFIG)
    if not path:
        return
    with open(path, encoding="utf-8") as handle:
        config = json.load(handle)
    if config.get("sources"):
        import_hook.install(import_hook.load_sources_file(config["sources"]))
    dump = config.get("xla_dump")
    if dump:
        own = Path(dump) / str(os.getpid())
        flags = xla.dump_flags(own, config.get("xla_names") or [])
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flags}".strip()
    if config.get("status_dir"):
        effects.configure(Path(config["status_dir"]) / "prints", config.get("watch_files") or ())
    seed = config.get("seed")
    if seed is not None:
        _seed_python(int(seed))
    xla.install(config.get("jit_files"), config.get("watch_files") or (), seed)
    atexit.register(_write_status, config)


activate()
