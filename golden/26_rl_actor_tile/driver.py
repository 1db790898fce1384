"""Golden case 26: an RL agent acting on one state and on batches of states.

The agent's ``get_action`` calls a project Keras model held in ``self.actor``, whose
``call`` tiles a variable to the batch size read statically (``states.shape[0]``).
Twelve calls: single states while acting, batches while evaluating. Usage: ``python
driver.py [MODULE.py]``. Prints the actions, then ``TRACES {...}``; with
``GOLDEN_UNSEEN=1`` also batch sizes never seen and a second agent.
"""

import importlib.util
import json
import os
import sys
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


def act(agent, rng, size):
    states = rng.normal(size=(size, 3)).astype("float32")
    noise = rng.normal(size=(size, 2)).astype("float32")
    return np.asarray(agent.get_action(states, noise))


def main():
    module = load_module()
    tf.keras.utils.set_random_seed(4)
    agent = module.Agent(3, 2)
    rng = np.random.default_rng(2)
    for call, size in enumerate((1, 1, 8, 1, 5, 1, 8, 3, 1, 6, 1, 2)):
        actions = act(agent, rng, size)
        print(f"call {call}: batch {size} mean action {actions.mean():.5f}")
    traces = {"Agent.get_action": agent.get_action.experimental_get_tracing_count()}
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        other = module.Agent(3, 2)
        for size in (4, 17):
            print(f"UNSEEN batch {size}: {act(agent, rng, size).mean():.5f}")
            print(f"UNSEEN other batch {size}: {act(other, rng, size).mean():.5f}")


if __name__ == "__main__":
    main()
