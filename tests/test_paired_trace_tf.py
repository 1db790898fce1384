"""The guarded relaxed trace paired with call-site tensors, with real TensorFlow: the
original and the fixed program compared on calls the profile never saw (other image
sizes, a float64 image from another call site, Python numbers from a call site not
rewritten, ints where floats were seen), and the trace counts on the profiled calls."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from test_safe_default_tf import AUTOSIG, fix, outcome, run

pytestmark = [pytest.mark.tf, pytest.mark.slow]

PROGRAM = """\
import json
import sys
import numpy as np
import tensorflow as tf

CALLS = tf.Variable(0)  # TensorFlow work of the module's own at import


@tf.function
def smooth(image, steps, step_size):
    for _ in tf.range(steps):
        image = image + step_size * (tf.roll(image, 1, axis=1) - image)
    return tf.reduce_mean(image * image)


def run(rng):
    for call in range(10):
        img = rng.normal(size=(1, 6 + call, 8 + call % 3, 1)).astype("float32")
        steps = 1 + call % 3
        step_size = 0.01 * (1 + call % 4)
        print(f"{float(smooth(img, steps, step_size)):.6f}")
        CALLS.assign_add(1)


def unseen(rng):
    for size, steps, step_size in ((5, 2, 0.5), (31, 4, 1), (3, 1, 0.25)):
        img = rng.normal(size=(1, size, size, 1))  # float64, another call site
        print("UNSEEN", float(smooth(img, steps, step_size)))
        print("UNSEEN", float(smooth(img.astype("float32"), steps, step_size)))


rng = np.random.default_rng(0)
run(rng)
if "unseen" in sys.argv:
    unseen(rng)
print("TRACES " + json.dumps(smooth.experimental_get_tracing_count()))
"""


def traces(stdout: str) -> int:
    return json.loads(stdout.strip().splitlines()[-1].removeprefix("TRACES "))


def fixed_program(tmp_path: Path, program: str) -> tuple[Path, Path, str, str]:
    """(original dir, fixed dir, the fixed prog.py, what fix said): profiled (10 calls,
    10 traces) and fixed with the profile."""
    original, fixed = tmp_path / "original", tmp_path / "fixed"
    original.mkdir()
    (original / "prog.py").write_text(program)
    done = run(original, str(AUTOSIG), "profile", "--", sys.executable, "prog.py")
    assert done.returncode == 0, done.stderr[-3000:]
    assert traces(done.stdout) == 10
    shutil.copytree(original, fixed)
    said = fix(fixed, "prog.py", fixed / ".autosig" / "profile.json")
    return original, fixed, (fixed / "prog.py").read_text(), said


def assert_one_trace_and_the_same_results(original: Path, fixed: Path) -> None:
    """One trace on the profiled calls; the original's output on the unseen calls."""
    profiled = run(fixed, sys.executable, "prog.py")
    assert profiled.returncode == 0, profiled.stderr[-3000:]
    assert traces(profiled.stdout) == 1  # the seeding trace serves every profiled call
    want = outcome(run(original, sys.executable, "prog.py", "unseen"))
    assert want[0] == 0 and "UNSEEN" in want[1]
    assert (
        outcome(run(fixed, sys.executable, "prog.py", "unseen"))[1].splitlines()[:-1]
        == (want[1].splitlines()[:-1])
    )


def test_the_paired_trace_keeps_results_and_reaches_one_trace(tmp_path: Path) -> None:
    original, fixed, text, said = fixed_program(tmp_path, PROGRAM)
    # `step_size` follows the image's dtype (the probe), and the call site shows a
    # float32 image (`.astype("float32")` just before it): both numbers are tensors there
    assert "smooth(img, tf.constant(steps), tf.constant(step_size, tf.float32))" in text, said
    assert "smooth.get_concrete_function(" in text, said
    assert_one_trace_and_the_same_results(original, fixed)


METHOD_PROGRAM = """\
import json
import sys
import numpy as np
import tensorflow as tf


class Smoother(tf.Module):
    def __init__(self, strength):
        super().__init__()
        self.strength = strength  # a Python float: weakly typed, as the steps are

    @tf.function
    def __call__(self, image, steps, step_size):
        for _ in tf.range(steps):
            image = image + step_size * (tf.roll(image, 1, axis=1) - image) * self.strength
        return tf.reduce_mean(image * image)


def run(rng, calls_unseen):
    smoother = Smoother(1.0)
    first = rng.normal(size=(1, 4, 4, 1)).astype("float32")
    for call in range(10):
        img = rng.normal(size=(1, 6 + call, 8 + call % 3, 1)).astype("float32")
        steps = 1 + call % 3
        step_size = 0.01 * (1 + call % 4)
        print(f"{float(smoother(img, steps, step_size)):.6f}")
    if calls_unseen:
        other = Smoother(0.5)  # another instance, made where no call was recorded
        print("UNSEEN", float(other(first, 2, 0.5)))
        for size, steps, step_size in ((5, 2, 0.5), (31, 4, 1), (3, 1, 0.25)):
            img = rng.normal(size=(1, size, size, 1))  # float64, another call site
            print("UNSEEN", float(smoother(img, steps, step_size)))
            print("UNSEEN", float(smoother(img.astype("float32"), steps, step_size)))
            print("UNSEEN", float(other(img.astype("float32"), steps, step_size)))
            print("UNSEEN", float(other(img[0], steps, step_size)))  # another rank
    print("TRACES " + json.dumps(smoother.__call__.experimental_get_tracing_count()))


run(np.random.default_rng(0), "unseen" in sys.argv)
"""


def test_a_methods_seed_after_its_instance_keeps_results_and_reaches_one_trace(
    tmp_path: Path,
) -> None:
    """The method's seed goes after ``smoother = Smoother(1.0)`` in its caller (not in
    ``__init__``: review5); the other instance, made where no call was recorded, and the
    calls the profile never saw trace as the original does."""
    original, fixed, text, said = fixed_program(tmp_path, METHOD_PROGRAM)
    assert "smoother(img, tf.constant(steps), tf.constant(step_size, tf.float32))" in text, said
    seeded = "    smoother = Smoother(1.0)\n    try:  # autosig: guarded relaxed trace"
    assert seeded in text and text.count("get_concrete_function(") == 1, said
    assert "    @tf.function\n" in text  # the method's own file: no reduce_retracing
    assert_one_trace_and_the_same_results(original, fixed)


SCRIPT_PROGRAM = """\
import json
import sys
import numpy as np
import tensorflow as tf


class Smoother(tf.Module):
    def __init__(self, strength):
        super().__init__()
        self.strength = strength

    @tf.function
    def __call__(self, image, steps, step_size):
        for _ in tf.range(steps):
            image = image + step_size * (tf.roll(image, 1, axis=1) - image) * self.strength
        return tf.reduce_mean(image * image)


rng = np.random.default_rng(0)
smoother = Smoother(1.0)
for call in range(10):
    img = rng.normal(size=(1, 6 + call, 8 + call % 3, 1)).astype("float32")
    steps = 1 + call % 3
    step_size = 0.01 * (1 + call % 4)
    print(f"{float(smoother(img, steps, step_size)):.6f}")
if "unseen" in sys.argv:
    for size, steps, step_size in ((5, 2, 0.5), (31, 4, 1), (3, 1, 0.25)):
        img = rng.normal(size=(1, size, size, 1))
        print("UNSEEN", float(smoother(img, steps, step_size)))
        print("UNSEEN", float(smoother(img.astype("float32"), steps, step_size)))
print("TRACES " + json.dumps(smoother.__call__.experimental_get_tracing_count()))
"""


def test_a_scripts_method_is_seeded_after_its_module_level_instance(tmp_path: Path) -> None:
    """A script (module-level code, review7): the image's dtype shows at the call
    (``.astype("float32")`` just before it, only library code between), so the numbers
    are tensors there and the seed follows ``smoother = Smoother(1.0)``."""
    original, fixed, text, said = fixed_program(tmp_path, SCRIPT_PROGRAM)
    assert "smoother(img, tf.constant(steps), tf.constant(step_size, tf.float32))" in text, said
    seeded = "smoother = Smoother(1.0)\ntry:  # autosig: guarded relaxed trace"
    assert seeded in text and text.count("get_concrete_function(") == 1, said
    assert_one_trace_and_the_same_results(original, fixed)
