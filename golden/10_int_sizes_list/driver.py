"""Golden case 10: a Python int argument that sizes a list comprehension.

``levels`` decides how many tensors the function returns, so it must stay a Python
int; the signal length varies too. Usage: ``python driver.py [MODULE.py]`` (default:
model.py beside this file). Prints results, then ``TRACES {...}``.
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
    """Calls outside the profile: a batch of 3, more levels, a short signal."""
    for shape, levels in (((3, 50, 1), 4), ((1, 8, 1), 2)):
        means = model.pyramid(rng.normal(size=shape).astype("float32"), levels)
        print(f"UNSEEN {shape}: " + " ".join(f"{float(np.mean(m)):.4f}" for m in means))


def main():
    model = load_module()
    rng = np.random.default_rng(10)
    for call in range(12):
        levels = 2 + call % 3
        signal = rng.normal(size=(2, 32 + 4 * call, 1)).astype("float32")
        means = model.pyramid(signal, levels)
        summary = " ".join(f"{float(np.mean(m)):.4f}" for m in means)
        print(f"call {call}: levels={levels} -> {len(means)} outputs {summary}")
    traces = {"pyramid": model.pyramid.experimental_get_tracing_count()}
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        unseen(model, rng)


if __name__ == "__main__":
    main()
