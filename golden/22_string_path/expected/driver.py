"""Golden case 22: a Python string path, different every step, used only by
``tf.io.write_file`` inside the step.

Eight steps, each writing its snapshot to its own file. Usage: ``python driver.py
[MODULE.py]`` (default: model.py beside this file). Prints the totals and what each
file holds, then ``TRACES {...}``.
"""

import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import tensorflow as tf


def load_module():
    """Import the module under test as ``model``: model.py, or the file in argv[1]."""
    if len(sys.argv) < 2:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import model

        return model
    spec = importlib.util.spec_from_file_location("model", Path(sys.argv[1]).resolve())
    module = importlib.util.module_from_spec(spec)
    sys.modules["model"] = module
    spec.loader.exec_module(module)
    return module


def snapshot(path):
    """What a snapshot file holds: its tensor's sum and first row."""
    value = tf.io.parse_tensor(tf.io.read_file(path), tf.float32).numpy()
    return f"sum {float(value.sum()):.5f} row {' '.join(f'{v:.4f}' for v in value[0])}"


def unseen(model, rng, folder):
    """Calls outside the profile: another folder, a non-ASCII name, an absolute path."""
    for name in ("other/snap_999.tensor", "été/snäp.tensor", f"{folder}/a/b/last.tensor"):
        os.makedirs(os.path.dirname(name), exist_ok=True)
        total = model.advance(rng.normal(size=(4, 4)).astype("float32"), name)
        shown = name.replace(folder, "<folder>")
        print(f"UNSEEN {shown}: total {float(total):.5f} file {snapshot(name)}")


def main():
    model = load_module()
    rng = np.random.default_rng(22)
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)  # relative paths: the same in every run
        os.mkdir("snapshots")
        for step in range(8):
            path = f"snapshots/snap_{step:03d}.tensor"
            total = model.advance(rng.normal(size=(4, 4)).astype("float32"), tf.constant(path))
            print(f"step {step}: total {float(total):.5f} file {snapshot(path)}")
        traces = {"advance": model.advance.experimental_get_tracing_count()}
        print("TRACES " + json.dumps(traces, sort_keys=True))
        if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
            unseen(model, rng, folder)


if __name__ == "__main__":
    main()
