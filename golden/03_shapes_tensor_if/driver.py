"""Golden case 03: shapes that vary on every step, and an ``if`` on a tensor value.

Twelve steps, each with a new (rows, columns) shape; the sign of the sum alternates so
both branches of the tensor ``if`` run. Usage: ``python driver.py [MODULE.py]``
(default: model.py beside this file). Prints results, then ``TRACES {...}``.
"""

import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np


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


def unseen(model, rng):
    """Calls outside the profile: other shapes."""
    for rows, cols in ((1, 1), (30, 2)):
        features = rng.uniform(0.1, 1.0, size=(rows, cols)).astype("float32")
        scaled, count = model.normalize(features)
        print(f"UNSEEN {rows}x{cols}: rows {int(count)} sum {float(np.sum(scaled)):.4f}")


def main():
    model = load_module()
    rng = np.random.default_rng(3)
    for step in range(12):
        rows, cols = 2 + step, 3 + (step * 5) % 7
        features = rng.uniform(0.1, 1.0, size=(rows, cols)).astype("float32")
        if step % 2:
            features = -features
        scaled, count = model.normalize(features)
        print(f"step {step}: shape {scaled.shape} rows {int(count)} sum {float(np.sum(scaled)):.4f}")
    traces = {"normalize": model.normalize.experimental_get_tracing_count()}
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        unseen(model, rng)


if __name__ == "__main__":
    main()
