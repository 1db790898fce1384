"""Golden case 05: print vs tf.print, a trace-time logging print, a Python counter and a
Python list built in a loop, inside a tf.function method.

Ten batches of varying size. Usage: ``python driver.py [MODULE.py]`` (default:
model.py beside this file). Prints results, the counter, then ``TRACES {...}``.
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


def fmt(values):
    return " ".join(f"{v:.3f}" for v in values)


def unseen(model, stats, rng):
    """Calls outside the profile: another batch size, another instance's width."""
    moments = stats.update(rng.normal(size=(9, 3)).astype("float32"))
    print(f"UNSEEN batch 9: {fmt(moments.numpy()[1])}")
    wide = model.RunningStats(features=5)
    moments = wide.update(rng.normal(size=(2, 5)).astype("float32"))
    print(f"UNSEEN features 5: {fmt(moments.numpy()[1])}")


def main():
    model = load_module()
    stats = model.RunningStats(features=3)
    rng = np.random.default_rng(5)
    for step in range(10):
        batch = rng.normal(size=(4 + step % 4, 3)).astype("float32")
        moments = stats.update(batch)
        print(f"step {step}: second moments {fmt(moments.numpy()[1])}")
    print(f"steps counted: {int(stats.steps)}")
    print(f"total: {fmt(stats.total.numpy())}")
    traces = {"RunningStats.update": stats.update.experimental_get_tracing_count()}
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        unseen(model, stats, rng)


if __name__ == "__main__":
    main()
