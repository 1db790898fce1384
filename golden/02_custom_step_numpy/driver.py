"""Golden case 02: a custom training step fed NumPy batches of varying size and dtype.

Phase 1 feeds float64 NumPy arrays (as read from a CSV), phases 2 and 3 float32 ones
with other batch sizes; every phase ends with a partial batch. Usage: ``python driver.py [MODULE.py]`` (default:
model.py beside this file). Prints losses, then ``TRACES {...}``.
"""

import importlib.util
import json
import os
import random
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


def batches(x, y, batch_size):
    for start in range(0, len(x), batch_size):
        yield x[start : start + batch_size], y[start : start + batch_size]


def unseen(model, x, y):
    """Calls outside the profile: other batch sizes (the noise differs by design after
    the unsafe AS102 fix, so only what does not depend on it is printed)."""
    for size in (5, 7):
        loss = model.train_step(x[:size].astype("float32"), y[:size])
        print(f"UNSEEN train_step batch {size}: finite {bool(np.isfinite(float(loss)))}")


def main():
    random.seed(0)
    model = load_module()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(90, 6))  # float64, as NumPy makes it
    y = (x[:, 0] > 0).astype("int32") + (x[:, 1] > 0).astype("int32")
    for phase, (dtype, batch_size) in enumerate([("float64", 32), ("float32", 16), ("float32", 24)]):
        for xb, yb in batches(x.astype(dtype), y, batch_size):
            loss = model.train_step(xb, yb)
        print(f"phase {phase} ({dtype}): last loss {float(loss):.4f}")
    traces = {"train_step": model.train_step.experimental_get_tracing_count()}
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        unseen(model, x, y)


if __name__ == "__main__":
    main()
