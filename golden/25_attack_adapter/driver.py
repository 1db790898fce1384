"""Golden case 25: a model-agnostic FGSM adapter around an MNIST-shaped classifier.

Six batches of 28x28x1 images, of varying batch size. Usage: ``python driver.py
[MODULE.py]``. Prints statistics of the adversarial images, then ``TRACES {...}``;
with ``GOLDEN_UNSEEN=1`` also batch sizes never seen, a second adapter and one
around a classifier of 32x32x3 images.
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


def classifier(seed, shape=(28, 28, 1)):
    tf.keras.utils.set_random_seed(seed)
    return tf.keras.Sequential(
        [
            tf.keras.Input(shape=shape),
            tf.keras.layers.Conv2D(4, 3, activation="relu"),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(10),
        ]
    )


def batch(rng, size, shape=(28, 28, 1)):
    images = rng.uniform(size=(size, *shape)).astype("float32")
    labels = rng.integers(0, 10, size=size).astype("int64")
    return images, labels


def show(label, adversarial):
    values = np.asarray(adversarial)
    print(f"{label}: {values.shape[0]} images, mean {values.mean():.5f}, max {values.max():.3f}")


def main():
    module = load_module()
    attack = module.FGSM(classifier(1), epsilon=0.1)
    rng = np.random.default_rng(11)
    for call, size in enumerate((16, 16, 7, 16, 3, 11)):
        show(f"call {call}", attack(*batch(rng, size)))
    traces = {"FGSM.__call__": attack.__call__.experimental_get_tracing_count()}
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        other = module.FGSM(classifier(2), epsilon=0.05)
        for size in (1, 33):
            images, labels = batch(rng, size)
            show(f"UNSEEN batch {size}", attack(images, labels))
            show(f"UNSEEN other batch {size}", other(images, labels))
        # the adapter is model-agnostic: a CIFAR-shaped classifier works with it too
        cifar = module.FGSM(classifier(3, (32, 32, 3)), epsilon=0.1)
        show("UNSEEN 32x32x3 batch 4", cifar(*batch(rng, 4, (32, 32, 3))))


if __name__ == "__main__":
    main()
