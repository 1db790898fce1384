"""Golden case 11: Keras ``model.fit`` with a different batch size each round.

Keras owns the tf.functions (``multi_step_on_iterator``, ``one_step_on_data`` made by
``make_train_function``); there is no user source to rewrite. Trace counts are summed
over the tf.function objects Keras creates.
Usage: ``python driver.py [MODULE.py]`` (default: model.py beside this file). Prints
losses, then ``TRACES {...}``.
"""

import importlib.util
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from tensorflow.python.eager.polymorphic_function import polymorphic_function

CREATED = []


def record_every_tf_function():
    """Keep every tf.function object made from now on: Keras makes them internally."""
    original_init = polymorphic_function.Function.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        CREATED.append(self)

    polymorphic_function.Function.__init__ = init


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


def unseen(module, x, y):
    """Calls outside the profile: another batch size."""
    losses = module.fit_schedule(module.build_model(), x, y, batch_sizes=[10])
    print("UNSEEN " + " ".join(f"{loss:.4f}" for loss in losses))


def main():
    record_every_tf_function()
    module = load_module()
    rng = np.random.default_rng(11)
    x = rng.normal(size=(100, 6)).astype("float32")
    y = x.sum(axis=1, keepdims=True).astype("float32")
    net = module.build_model()
    losses = module.fit_schedule(net, x, y, batch_sizes=[16, 32, 50, 64])
    print("losses " + " ".join(f"{loss:.4f}" for loss in losses))
    traces = defaultdict(int)
    for fn in CREATED:
        qualname = fn.python_function.__qualname__
        if qualname.startswith("TensorFlowTrainer."):  # not tf.data's internal functions
            traces[qualname.rsplit(".", 1)[-1]] += fn.experimental_get_tracing_count()
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        unseen(module, x, y)


if __name__ == "__main__":
    main()
