"""Golden case 07: a tf.Module ``__call__`` taking an image of varying height/width, a
Python int number of steps and a Python float step size.

Twelve calls; the image size, ``steps`` and ``step_size`` change between calls.
Usage: ``python driver.py [MODULE.py]`` (default: model.py beside this file).
Prints results, then ``TRACES {...}``.
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
    """Calls outside the profile: a batch of 2, another instance, more steps."""
    smoother = model.Smoother()
    for shape, steps, step_size in (((2, 6, 6, 1), 2, 0.05), ((1, 5, 7, 1), 6, 0.2)):
        image = rng.uniform(size=shape).astype("float32")
        smooth = smoother(image, steps, step_size)
        print(f"UNSEEN {shape}: std {float(np.std(smooth)):.5f}")


def main():
    model = load_module()
    smoother = model.Smoother()
    rng = np.random.default_rng(7)
    for call in range(12):
        height, width = 8 + call % 3 * 4, 10 + call % 4 * 2
        image = rng.uniform(size=(1, height, width, 1)).astype("float32")
        steps = 1 + call % 4
        step_size = round(0.05 + 0.01 * (call % 3), 2)
        smooth = smoother(image, steps, step_size)
        print(f"call {call}: {smooth.shape[1:3]} steps={steps} std {float(np.std(smooth)):.5f}")
    traces = {"Smoother.__call__": smoother.__call__.experimental_get_tracing_count()}
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        unseen(model, rng)


if __name__ == "__main__":
    main()
