#!/usr/bin/env python
"""Benchmark: traces and time of retracing workloads, unfixed vs fixed four ways.

Each workload is a small real module (written to a work directory) run as:

- ``unfixed``: plain ``@tf.function``;
- ``reduce_retracing``: ``@tf.function(reduce_retracing=True)`` only;
- ``autosig``: the unfixed module after the real pipeline, ``autosig profile -- ...``
  then ``autosig fix --profile`` (n/a, with the reason, when that fails);
- ``hand``: the ``input_signature`` a careful engineer writes (or, for a workload whose
  fix belongs in the calling code, the engineer's own change there).

Every measurement runs one variant in a fresh child process, as a user runs one version of
their program: two variants in one process are not independent, because TensorFlow does
less work for a graph identical to one it already ran, so whichever of autosig and hand
(the same signature) ran second was up to 7% faster. A repetition runs every variant,
in an order rotated between repetitions (by default 8: each variant twice in each
position), each after the same untimed warm-up; medians over the repetitions are
reported. Columns: traces, total time of the workload (tracing included), median
steady-state step time (steps after the first few), and the ratios of total time
autosig/hand (target <= 1.05), reduce_retracing/autosig, unfixed/autosig and
unfixed/hand (the most any fix can gain on that workload), each the median of the
repetitions' paired ratios. Prints a markdown table and
writes JSON to bench-results/retrace.json.

    python scripts/bench_retrace.py            # full run (about 12 minutes on 2 cores)
    python scripts/bench_retrace.py --quick    # smoke run
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_common import (  # noqa: E402
    autosig_command,
    machine,
    machine_line,
    markdown_table,
    median,
    python_executable,
    ratio,
    write_results,
)

VARIANTS = ("unfixed", "reduce_retracing", "autosig", "hand")
WARMUP_STEPS = 5
"""Steps excluded from the steady-state median (first traces, kernel warm-up)."""


@dataclass(frozen=True)
class Workload:
    """A module template (``{decorator}`` marks the tf.function line) and its hand signature."""

    name: str
    description: str
    template: str
    hand_decorator: str
    steps: int
    quick_steps: int
    inputs: Callable[[Any, int], tuple[Any, ...]] | None = None
    """(NumPy generator, step) -> one call's arguments; None: built in ``make_inputs``."""
    entry: str = ""
    """The module attribute the workload calls; empty: see ``entry_point``."""
    hand_template: str | None = None
    """The hand variant's own module text, when the fix is not in the decorator."""
    traced: str = ""
    """The tf.function whose traces are counted when ``entry`` is a plain function calling
    it (a workload whose fix is at the call site)."""


TEXT = Workload(
    name="text_train_step",
    description="text classifier train step, int32 token batches (batch 16-32, length 5-60)",
    template='''"""Bag-of-embeddings text classifier and its training step."""

import tensorflow as tf

VOCAB, DIM = 1000, 32
embedding = tf.Variable(tf.random.stateless_normal([VOCAB, DIM], seed=[1, 1]) * 0.05)
dense = tf.Variable(tf.random.stateless_normal([DIM, 2], seed=[1, 2]) * 0.05)


{decorator}
def train_step(tokens, labels):
    with tf.GradientTape() as tape:
        mask = tf.cast(tokens > 0, tf.float32)
        vectors = tf.gather(embedding, tokens) * mask[..., None]
        count = tf.maximum(tf.reduce_sum(mask, 1, keepdims=True), 1.0)
        logits = (tf.reduce_sum(vectors, 1) / count) @ dense
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )
    grad_embedding, grad_dense = tape.gradient(loss, [embedding, dense])
    embedding.assign_sub(0.1 * tf.convert_to_tensor(grad_embedding))
    dense.assign_sub(0.1 * grad_dense)
    return loss
''',
    hand_decorator="""@tf.function(
    input_signature=[tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([None], tf.int32)]
)""",
    steps=200,
    quick_steps=40,
)

SCALARS = Workload(
    name="python_scalars",
    description="tf.Module __call__(image, steps: int, step_size: float), values change per call",
    template='''"""Iterative image smoothing with Python int/float arguments."""

import tensorflow as tf


class Smoother(tf.Module):
    def __init__(self):
        super().__init__()
        laplacian = [[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]
        self.kernel = tf.constant(laplacian, shape=[3, 3, 1, 1])

    {decorator}
    def __call__(self, image, steps, step_size):
        for _ in tf.range(steps):
            image = image + step_size * tf.nn.conv2d(image, self.kernel, 1, "SAME")
        return image
''',
    hand_decorator="""@tf.function(
        input_signature=[
            tf.TensorSpec([1, 32, 32, 1], tf.float32),
            tf.TensorSpec([], tf.int32),
            tf.TensorSpec([], tf.float32),
        ]
    )""",
    steps=48,
    quick_steps=16,
)

DICT = Workload(
    name="dict_inputs",
    description="scoring function on a nested dict of feature tensors (batch 1-64)",
    template='''"""A scoring function on nested dict features."""

import tensorflow as tf

w1 = tf.Variable(tf.random.stateless_normal([4, 16], seed=[2, 1]))
w2 = tf.Variable(tf.random.stateless_normal([16, 1], seed=[2, 2]))


{decorator}
def score(features):
    user, item = features["user"], features["item"]
    category = tf.cast(item["category"], tf.float32)
    x = tf.stack([user["age"] / 100.0, user["income"], item["price"] / 10.0, category], axis=1)
    return tf.sigmoid(tf.nn.relu(x @ w1) @ w2)[:, 0]
''',
    hand_decorator="""@tf.function(
    input_signature=[
        {
            "user": {
                "age": tf.TensorSpec([None], tf.float32),
                "income": tf.TensorSpec([None], tf.float32),
            },
            "item": {
                "price": tf.TensorSpec([None], tf.float32),
                "category": tf.TensorSpec([None], tf.int64),
            },
        }
    ]
)""",
    steps=200,
    quick_steps=40,
)

RAGGED = Workload(
    name="ragged",
    description="bag of words on a tf.RaggedTensor of int64 token ids (batch 8-40)",
    template='''"""Mean of token embeddings over a ragged batch."""

import tensorflow as tf

table = tf.Variable(tf.random.stateless_normal([500, 16], seed=[3, 1]))
projection = tf.Variable(tf.random.stateless_normal([16, 4], seed=[3, 2]))


{decorator}
def encode(tokens):
    return tf.reduce_mean(tf.gather(table, tokens), axis=1) @ projection
''',
    hand_decorator="""@tf.function(
    input_signature=[
        tf.RaggedTensorSpec([None, None], tf.int64, ragged_rank=1, row_splits_dtype=tf.int64)
    ]
)""",
    steps=200,
    quick_steps=40,
)

WORKLOADS = {w.name: w for w in (TEXT, SCALARS, DICT, RAGGED)}


# --- workload: a Python int passed to a project helper that only indexes a tensor ----------

HELPER_FEATURES, HELPER_WIDTH = 24, 8


def helper_int_inputs(rng: Any, step: int) -> tuple[Any, ...]:
    """A batch of windows of the series and the target column, cycling over all columns."""
    import numpy as np

    window = rng.normal(size=(32, HELPER_WIDTH + 1, HELPER_FEATURES)).astype(np.float32)
    return window, step % HELPER_FEATURES


HELPER_INT = Workload(
    name="helper_int",
    description=(
        f"forecaster step; the Python int target column ({HELPER_FEATURES} values) goes to "
        "a helper that only indexes tensors (values[..., column])"
    ),
    template=f'''"""A linear next-step forecaster trained one target column at a time."""

import tensorflow as tf

FEATURES, WIDTH = {HELPER_FEATURES}, {HELPER_WIDTH}
kernel = tf.Variable(tf.zeros([WIDTH * FEATURES, FEATURES]))


def split_window(window):
    return window[:, :WIDTH, :], window[:, WIDTH, :]


def label_column(values, column):
    return values[..., column]


{{decorator}}
def train_step(window, target):
    inputs, labels = split_window(window)
    flat = tf.reshape(inputs, [-1, WIDTH * FEATURES])
    with tf.GradientTape() as tape:
        forecast = tf.matmul(flat, kernel)
        error = label_column(forecast, target) - label_column(labels, target)
        loss = tf.reduce_mean(tf.square(error))
    kernel.assign_sub(0.01 * tape.gradient(loss, kernel))
    return loss
''',
    hand_decorator=f"""@tf.function(
    input_signature=[
        tf.TensorSpec([None, {HELPER_WIDTH + 1}, {HELPER_FEATURES}], tf.float32),
        tf.TensorSpec([], tf.int32),
    ]
)""",
    steps=240,
    quick_steps=48,
    inputs=helper_int_inputs,
    entry="train_step",
)
WORKLOADS[HELPER_INT.name] = HELPER_INT


# --- a model argument plus a Python scalar: the fix is at the call site ---------------------

CALLSITE_TEMPLATE = '''"""Per-class saliency of a small classifier (vanilla gradients), one class per call."""

import tensorflow as tf


class Classifier(tf.Module):
    def __init__(self, classes):
        super().__init__()
        self.w1 = tf.Variable(tf.random.stateless_normal([64, 32], seed=[4, 1]) * 0.1)
        self.w2 = tf.Variable(tf.random.stateless_normal([32, classes], seed=[4, 2]) * 0.1)

    def __call__(self, x):
        return tf.nn.relu(x @ self.w1) @ self.w2


classifier = Classifier(40)


{decorator}
def explain(model, features, class_index):
    with tf.GradientTape() as tape:
        tape.watch(features)
        score = tf.reduce_sum(model(features)[:, class_index])
    return tf.abs(tape.gradient(score, features))


def explain_class(features, class_index):
{body}
'''


def callsite_inputs(rng: Any, step: int) -> tuple[Any, ...]:
    """A batch of features and a Python int class index (one of 40, in a scrambled order)."""
    import numpy as np

    return rng.normal(size=(16, 64)).astype(np.float32), int(step * 7 % 40)


class CountedCaller:
    """A plain function calling a tf.function: timed as the step, counted by its traces."""

    def __init__(self, call: Any, traced: Any) -> None:
        self.call, self.traced = call, traced

    def __call__(self, *args: Any) -> Any:
        return self.call(*args)

    def experimental_get_tracing_count(self) -> int:
        return self.traced.experimental_get_tracing_count()


CALLSITE = Workload(
    name="callsite_scalar",
    description="explain(model, features, class_index): a model object and a Python int "
    "class index (40 classes); fixed at the call site",
    template=CALLSITE_TEMPLATE.replace(
        "{body}", "    return explain(classifier, features, class_index)"
    ),
    hand_decorator="@tf.function",
    hand_template=CALLSITE_TEMPLATE.replace(
        "{body}",
        "    index = tf.convert_to_tensor(class_index, dtype=tf.int32)  # one trace for all\n"
        "    return explain(classifier, features, index)",
    ),
    steps=200,
    quick_steps=40,
    inputs=callsite_inputs,
    entry="explain_class",
    traced="explain",
)
WORKLOADS[CALLSITE.name] = CALLSITE


# --- child process: build inputs, load each variant, time it ------------------------------


def make_inputs(name: str, steps: int, seed: int) -> list[tuple[Any, ...]]:
    """The same inputs for every variant, built before any timing."""
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    calls: list[tuple[Any, ...]] = []
    own = WORKLOADS[name].inputs if name in WORKLOADS else None
    for step in range(steps):
        if own is not None:
            calls.append(own(rng, step))
        elif name == "text_train_step":
            batch, length = int(rng.integers(16, 33)), int(rng.integers(5, 61))
            tokens = rng.integers(0, 1000, size=(batch, length)).astype(np.int32)
            calls.append((tokens, (tokens[:, 0] % 2).astype(np.int32)))
        elif name == "python_scalars":
            image = rng.uniform(size=(1, 32, 32, 1)).astype(np.float32)
            calls.append((image, 1 + step % 8, round(0.02 + 0.01 * (step % 6), 2)))
        elif name == "dict_inputs":
            batch = int(rng.integers(1, 65))
            user = {
                "age": rng.uniform(18, 80, batch).astype(np.float32),
                "income": rng.uniform(0, 5, batch).astype(np.float32),
            }
            item = {
                "price": rng.uniform(1, 20, batch).astype(np.float32),
                "category": rng.integers(0, 9, batch).astype(np.int64),
            }
            calls.append(({"user": user, "item": item},))
        elif name == "ragged":
            lengths = rng.integers(1, 30, size=int(rng.integers(8, 41)))
            values = tf.constant(rng.integers(0, 500, size=int(lengths.sum())), tf.int64)
            calls.append((tf.RaggedTensor.from_row_lengths(values, lengths),))
        else:
            raise SystemExit(f"bench_retrace: unknown workload {name}")
    return calls


def entry_point(name: str, module: Any) -> tuple[Any, Any]:
    """The tf.function the workload calls, and the object it is bound to (kept alive:
    a tf.function method holds its instance only weakly)."""
    if name == "python_scalars":
        smoother = module.Smoother()
        return smoother.__call__, smoother
    if WORKLOADS[name].entry:
        fn = getattr(module, WORKLOADS[name].entry)
        if WORKLOADS[name].traced:
            fn = CountedCaller(fn, getattr(module, WORKLOADS[name].traced))
        return fn, module
    attribute = {"text_train_step": "train_step", "dict_inputs": "score", "ragged": "encode"}
    return getattr(module, attribute[name]), module


def load_variant(path: Path, label: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"bench_{label}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def time_variant(name: str, path: Path, label: str, calls: list) -> dict[str, Any]:
    import tensorflow as tf

    fn, _owner = entry_point(name, load_variant(path, label))
    step_times = []
    start = time.perf_counter()
    for args in calls:
        t0 = time.perf_counter()
        for tensor in tf.nest.flatten(fn(*args)):
            tensor.numpy()
        step_times.append(time.perf_counter() - t0)
    total = time.perf_counter() - start
    return {
        "traces": fn.experimental_get_tracing_count(),
        "total_s": total,
        "median_step_s": statistics.median(step_times[WARMUP_STEPS:] or step_times),
    }


def warm_signed_path() -> None:
    """Run TensorFlow's input_signature and reduce_retracing code paths once, on a graph
    unlike any workload's, so the first signed variant timed pays no first-use cost."""
    import tensorflow as tf

    signed = tf.function(
        lambda x, n: x * tf.cast(n, tf.float32),
        input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32)],
    )
    relaxed = tf.function(lambda x: x + 1.0, reduce_retracing=True)
    for size in range(1, 5):
        signed(tf.ones([size]), size).numpy()
        relaxed(tf.ones([size])).numpy()


def warm_kernels(name: str, path: Path, calls: list) -> None:
    """Run the workload's first calls eagerly: warms op kernels and thread pools, but
    builds no graph, so no variant timed after it finds a twin graph to reuse."""
    import numpy as np
    import tensorflow as tf

    def as_tensor(value: Any) -> Any:  # what tf.function does to a NumPy argument
        return tf.convert_to_tensor(value) if isinstance(value, np.ndarray) else value

    tf.config.run_functions_eagerly(True)
    try:
        fn, _owner = entry_point(name, load_variant(path, "warmup"))
        for args in calls:
            for tensor in tf.nest.flatten(fn(*tf.nest.map_structure(as_tensor, args))):
                tensor.numpy()
    finally:
        tf.config.run_functions_eagerly(False)


def child(args: argparse.Namespace) -> None:
    """Time the given variant files in the given order; print one JSON line."""
    calls = make_inputs(args.workload, args.steps, seed=args.seed)
    files = dict(item.split("=", 1) for item in args.variant)
    if args.warmup:
        # Untimed, the same in every child: TensorFlow's tf.function machinery on a graph
        # unlike any workload's, then the workload's own kernels, run eagerly.
        warm_signed_path()
        warm_kernels(args.workload, Path(args.warmup), calls[:WARMUP_STEPS])
    results = {
        label: time_variant(args.workload, Path(path), label, calls)
        for label, path in files.items()
    }
    print("BENCH " + json.dumps(results))


# --- parent: prepare variants, run the autosig pipeline, interleave, summarise ------------


def prepare(workload: Workload, root: Path, quick: bool) -> tuple[dict[str, Path], dict]:
    """Write the variants; run autosig profile + fix to make the autosig one."""
    folder = root / workload.name
    folder.mkdir(parents=True)
    files = {}
    sources = {
        "unfixed": "@tf.function",
        "reduce_retracing": "@tf.function(reduce_retracing=True)",
        "hand": workload.hand_decorator,
    }
    for label, decorator in sources.items():
        files[label] = folder / f"{label}.py"
        template = workload.template
        if label == "hand" and workload.hand_template is not None:
            template = workload.hand_template
        files[label].write_text(template.format(decorator=decorator))
    pipeline = run_autosig_pipeline(workload, folder, files["unfixed"], quick)
    if pipeline["ok"]:
        files["autosig"] = folder / "autosig" / "model.py"
    return files, pipeline


def run_autosig_pipeline(workload: Workload, folder: Path, unfixed: Path, quick: bool) -> dict:
    """profile the unfixed module running the workload, then fix it in place."""
    project = folder / "autosig"
    project.mkdir()
    model = project / "model.py"
    shutil.copyfile(unfixed, model)
    steps = workload.quick_steps if quick else workload.steps
    record = {"ok": False, "commands": []}
    commands = [
        [*autosig_command(), "profile", "-o", "profile.json", "--", python_executable()]
        + [str(Path(__file__).resolve()), "_child", "--workload", workload.name]
        + ["--steps", str(steps), "--seed", "1", "--variant", "profiled=model.py"],
        [*autosig_command(), "fix", "model.py", "--profile", "profile.json"],
    ]
    for command in commands:
        start = time.perf_counter()
        proc = subprocess.run(command, cwd=project, capture_output=True, text=True)
        record["commands"].append(
            {
                "command": "autosig "
                + " ".join(
                    "python" if part == python_executable() else part for part in command[3:]
                ),
                "exit": proc.returncode,
                "seconds": round(time.perf_counter() - start, 2),
            }
        )
        if proc.returncode not in (0, 1) or (command[3] == "profile" and proc.returncode):
            tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            record["error"] = f"autosig {command[3]} exited {proc.returncode}: {tail}"
            return record
    fixed = model.read_text()
    record["ok"] = fixed != unfixed.read_text()
    if not record["ok"]:
        record["error"] = "autosig fix changed nothing"
    record["decorator"] = [
        line
        for line in fixed.splitlines()
        if "tf.function" in line or "Spec(" in line or "tf.constant(" in line
    ]
    return record


def run_repetition(
    workload: Workload, files: dict[str, Path], order: list[str], steps: int, seed: int
) -> dict[str, dict]:
    """Every variant in ORDER, each in its own child process, on the same inputs."""
    results: dict[str, dict] = {}
    for label in order:
        command = [python_executable(), str(Path(__file__).resolve()), "_child"]
        command += ["--workload", workload.name, "--steps", str(steps), "--seed", str(seed)]
        command += ["--warmup", str(files["unfixed"]), "--variant", f"{label}={files[label]}"]
        proc = subprocess.run(command, capture_output=True, text=True)
        lines = [line for line in proc.stdout.splitlines() if line.startswith("BENCH ")]
        if proc.returncode or not lines:
            tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
            raise SystemExit(f"bench_retrace: {workload.name} {label} child failed:\n{tail}")
        results.update(json.loads(lines[-1][len("BENCH ") :]))
    return results


def summarise(runs: list[dict[str, dict]], labels: list[str]) -> dict[str, dict]:
    summary = {}
    for label in labels:
        measured = [run[label] for run in runs if label in run]
        summary[label] = {
            "traces": max(m["traces"] for m in measured),
            "total_s": median([m["total_s"] for m in measured]),
            "median_step_s": median([m["median_step_s"] for m in measured]),
            "total_s_all": [m["total_s"] for m in measured],
        }
    return summary


def paired_ratio(runs: list[dict[str, dict]], numerator: str, denominator: str) -> float | None:
    """The median over repetitions of one repetition's ratio of total times: the two
    variants of a repetition ran seconds apart, so slow drift of the machine cancels
    out (each variant's median total is in the first table)."""
    ratios = [
        ratio(run[numerator]["total_s"], run[denominator]["total_s"])
        for run in runs
        if numerator in run and denominator in run
    ]
    return median([r for r in ratios if r is not None])


def tables(results: dict[str, dict]) -> str:
    rows, ratio_rows = [], []
    for name, result in results.items():
        summary = result["summary"]
        for label in VARIANTS:
            m = summary.get(label)
            rows.append(
                [name, label]
                + (
                    [m["traces"], m["total_s"], m["median_step_s"] * 1000]
                    if m
                    else [None, None, None]
                )
            )
        runs = result["runs"]
        ratio_rows.append(
            [
                name,
                paired_ratio(runs, "autosig", "hand"),
                paired_ratio(runs, "reduce_retracing", "autosig"),
                paired_ratio(runs, "unfixed", "autosig"),
                paired_ratio(runs, "unfixed", "hand"),
            ]
        )
    first = markdown_table(["workload", "variant", "traces", "total (s)", "median step (ms)"], rows)
    second = markdown_table(
        [
            "workload",
            "autosig/hand (target <= 1.05)",
            "reduce_retracing/autosig",
            "unfixed/autosig",
            "unfixed/hand (the most a fix gains)",
        ],
        ratio_rows,
    )
    return (
        f"{first}\n\nRatios of total time (median over repetitions of each repetition's "
        f"ratio):\n\n{second}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")
    inner = sub.add_parser("_child", help=argparse.SUPPRESS)
    inner.add_argument("--workload", required=True, choices=sorted(WORKLOADS))
    inner.add_argument("--steps", type=int, required=True)
    inner.add_argument("--seed", type=int, default=0)
    inner.add_argument("--warmup", help="module run eagerly first (untimed)")
    inner.add_argument("--variant", action="append", required=True, help="LABEL=PATH")
    parser.add_argument("--quick", action="store_true", help="few steps, one repetition")
    parser.add_argument(
        "--repeat",
        type=int,
        help="repetitions (default 8: each variant twice in each position)",
    )
    parser.add_argument("--workload", action="append", choices=sorted(WORKLOADS))
    parser.add_argument(
        "--output", type=Path, help="JSON file (default bench-results/retrace.json)"
    )
    parser.add_argument("--keep", type=Path, help="keep the generated variants in this directory")
    args = parser.parse_args(argv)
    if args.command == "_child":
        child(args)
        return 0

    repeat = args.repeat or (1 if args.quick else 2 * len(VARIANTS))
    selected = [WORKLOADS[name] for name in args.workload or WORKLOADS]
    root = args.keep or Path(tempfile.mkdtemp(prefix="autosig-bench-"))
    if args.keep:
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
    info = machine()
    results: dict[str, dict] = {}
    started = time.perf_counter()
    try:
        for workload in selected:
            files, pipeline = prepare(workload, root, args.quick)
            if not pipeline["ok"]:
                print(f"{workload.name}: autosig column n/a: {pipeline['error']}", file=sys.stderr)
            labels = [label for label in VARIANTS if label in files]
            steps = workload.quick_steps if args.quick else workload.steps
            runs = []
            for rep in range(repeat):
                order = labels[rep % len(labels) :] + labels[: rep % len(labels)]
                runs.append(run_repetition(workload, files, order, steps, seed=rep))
                print(f"{workload.name}: repetition {rep + 1}/{repeat} done", file=sys.stderr)
            results[workload.name] = {
                "description": workload.description,
                "steps": steps,
                "autosig_pipeline": pipeline,
                "summary": summarise(runs, labels),
                "runs": runs,
            }
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    table = tables(results)
    print(f"Retracing benchmark ({repeat} repetition(s), medians)\n")
    print(table)
    print(f"\nMachine: {machine_line(info)}")
    command = "python scripts/bench_retrace.py" + (" --quick" if args.quick else "")
    data = {
        "benchmark": "retrace",
        "command": command,
        "repeat": repeat,
        "machine": info,
        "wall_s": round(time.perf_counter() - started, 1),
        "workloads": results,
        "table": table,
    }
    path = write_results("retrace-quick" if args.quick else "retrace", data, args.output)
    print(f"Results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
