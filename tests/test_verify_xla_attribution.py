"""XLA compile counts belong to the exact function, not to every function of that name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autosig.verify.xla import AMBIGUOUS, FUNCTIONS_FILE, count_compiles, dump_flags

SUFFIX = "__XlaMustCompile_true_config_proto_1_executor_type_2_.1.before_optimizations.txt"


def _dump(directory: Path, modules: list[str], noted: list[tuple[str, str, str, int]] | None):
    """Fake one process's XLA dump: module names, and the functions it noted."""
    directory.mkdir(parents=True)
    for index, module in enumerate(modules):
        (directory / f"module_{index:04d}.{module}{SUFFIX}").write_text("")
    if noted is not None:
        lines = [
            json.dumps({"name": name, "file": file, "qualname": qualname, "line": line})
            for name, file, qualname, line in noted
        ]
        (directory / FUNCTIONS_FILE).write_text("\n".join(lines) + "\n")


def test_same_name_in_two_files_and_two_classes_counted_apart(tmp_path: Path) -> None:
    modules = [
        "a_inference_step_9",
        "a_inference_step_9",  # same concrete function, a new shape: a second compile
        "a_inference_step_19",
        "a_inference___call___29",
        "a_inference___call___39",
    ]
    noted = [
        ("__inference_step_9", "/p/a.py", "step", 4),
        ("__inference_step_19", "/p/b.py", "step", 4),
        ("__inference___call___29", "/p/a.py", "A.__call__", 9),
        ("__inference___call___39", "/p/a.py", "B.__call__", 14),
    ]
    _dump(tmp_path / "100", modules, noted)
    counts = count_compiles(tmp_path)
    assert counts.lookup("/p/a.py", "step") == 2
    assert counts.lookup("/p/b.py", "step") == 1
    assert counts.lookup("/p/a.py", "A.__call__") == 1
    assert counts.lookup("/p/a.py", "B.__call__") == 1
    assert counts.lookup("/p/a.py", "never_called") == 0


def test_uids_are_per_process(tmp_path: Path) -> None:
    """Two processes both have a concrete function uid 9: each counts in its own map."""
    _dump(tmp_path / "1", ["a_inference_step_9"], [("__inference_step_9", "/p/a.py", "step", 4)])
    _dump(tmp_path / "2", ["a_inference_step_9"], [("__inference_step_9", "/p/b.py", "step", 4)])
    counts = count_compiles(tmp_path)
    assert counts.lookup("/p/a.py", "step") == 1
    assert counts.lookup("/p/b.py", "step") == 1


def test_modules_of_functions_nobody_noted_are_not_ours(tmp_path: Path) -> None:
    """A user's own jit_compile ``step`` in an unchanged file passes the name filter."""
    _dump(
        tmp_path / "1",
        ["a_inference_step_9", "a_inference_step_77"],
        [("__inference_step_9", "/p/a.py", "step", 4)],
    )
    assert count_compiles(tmp_path).lookup("/p/a.py", "step") == 1


def test_forward_modules_by_name_only_when_one_owner(tmp_path: Path) -> None:
    noted = [
        ("__inference_loss_5", "/p/a.py", "loss", 3),
        ("__inference_step_9", "/p/a.py", "step", 8),
        ("__inference_step_19", "/p/b.py", "step", 8),
    ]
    _dump(tmp_path / "1", ["a_forward_loss_40", "a_forward_step_41"], noted)
    counts = count_compiles(tmp_path)
    assert counts.lookup("/p/a.py", "loss") == 1
    assert counts.lookup("/p/a.py", "step") == AMBIGUOUS
    assert counts.lookup("/p/b.py", "step") == AMBIGUOUS


def test_process_that_noted_nothing_makes_its_names_ambiguous(tmp_path: Path) -> None:
    _dump(tmp_path / "1", ["a_inference_step_9"], [("__inference_step_9", "/p/a.py", "step", 4)])
    _dump(tmp_path / "2", ["a_inference_step_9", "a_inference__lambda__3"], None)
    counts = count_compiles(tmp_path)
    assert counts.lookup("/p/a.py", "step") == AMBIGUOUS
    assert counts.lookup("/p/a.py", "f.<locals>.<lambda>") == AMBIGUOUS
    assert counts.lookup("/p/a.py", "other") == 0


def test_redefined_function_in_one_file_is_ambiguous(tmp_path: Path) -> None:
    noted = [
        ("__inference_step_9", "/p/a.py", "step", 4),
        ("__inference_step_19", "/p/a.py", "step", 20),
    ]
    _dump(tmp_path / "1", ["a_inference_step_9", "a_inference_step_19"], noted)
    assert count_compiles(tmp_path).lookup("/p/a.py", "step") == AMBIGUOUS


def test_module_names_xla_spells_differently(tmp_path: Path) -> None:
    """No XlaMustCompile (a jit function called inside a graph), digits in the name."""
    directory = tmp_path / "1"
    directory.mkdir()
    (directory / "module_0003.a_inference_inner_75__.1.before_optimizations.txt").write_text("")
    (directory / f"module_0004.a_inference_f_1__80{SUFFIX}").write_text("")
    (directory / f"module_0005.a_inference__lambda__81{SUFFIX}").write_text("")
    noted = [
        ("__inference_inner_75", "/p/a.py", "inner", 1),
        ("__inference_f_1__80", "/p/a.py", "f_1_", 5),
        ("__inference_<lambda>_81", "/p/a.py", "<lambda>", 9),
    ]
    (directory / FUNCTIONS_FILE).write_text(
        "".join(
            json.dumps({"name": n, "file": f, "qualname": q, "line": line}) + "\n"
            for n, f, q, line in noted
        )
        + '{"name": "cut short'
    )
    counts = count_compiles(tmp_path)
    assert counts.lookup("/p/a.py", "inner") == 1
    assert counts.lookup("/p/a.py", "f_1_") == 1
    assert counts.lookup("/p/a.py", "<lambda>") == 1


def test_dump_filter_matches_sanitized_names() -> None:
    import re

    flags = dump_flags("/d", ["<lambda>", "__call__"])
    pattern = flags.split("--xla_dump_hlo_module_re=")[1]
    assert re.fullmatch(pattern, "a_inference__lambda__9__XlaMustCompile_true")
    assert re.fullmatch(pattern, "a_inference___call___12__XlaMustCompile_true")
    assert re.fullmatch(pattern, "a_forward___call___13__XlaMustCompile_true")
    assert not re.fullmatch(pattern, "a_inference_step_9__XlaMustCompile_true")


# -- real TensorFlow: same-named functions in one program ---------------------------------

TWIN = """\
import tensorflow as tf


@tf.function
def step(x):
    return x * {k}


class {cls}:
    @tf.function
    def __call__(self, x):
        return x + {k}


def factory(k):
    @tf.function
    def train_step(x):
        return x * k

    return train_step
"""

DRIVER = """\
import os, sys
from autosig.verify import xla

here = os.path.dirname(os.path.abspath(__file__))
files = [os.path.join(here, "a.py"), os.path.join(here, "b.py")]
os.environ["XLA_FLAGS"] = xla.dump_flags(sys.argv[1], ["step", "__call__", "train_step"])
xla.install(files, files)
sys.path.insert(0, here)
import tensorflow as tf
import a, b

for n in (2, 3, 4):
    a.step(tf.ones([n]))
b.step(tf.ones([5]))
a.A()(tf.ones([2]))
a.A()(tf.ones([3]))
b.B()(tf.ones([2]))
for k in range(3):
    a.factory(float(k))(tf.ones([2]))
b.factory(1.0)(tf.ones([2]))
with tf.GradientTape() as tape:
    x = tf.ones([7])
    tape.watch(x)
    y = b.step(x)
tape.gradient(y, x)
"""


@pytest.mark.tf
def test_real_dump_counts_same_named_functions_apart(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(TWIN.format(k="2.0", cls="A"))
    (tmp_path / "b.py").write_text(TWIN.format(k="3.0", cls="B"))
    (tmp_path / "driver.py").write_text(DRIVER)
    dump = tmp_path / "dump"
    done = subprocess.run(
        [sys.executable, str(tmp_path / "driver.py"), str(dump)],
        capture_output=True,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    counts = count_compiles(dump)
    a, b = (os.path.realpath(tmp_path / name) for name in ("a.py", "b.py"))
    assert counts.lookup(a, "A.__call__") == 2  # two instances: two traces, two compiles
    assert counts.lookup(b, "B.__call__") == 1
    assert counts.lookup(a, "factory.<locals>.train_step") == 3
    assert counts.lookup(b, "factory.<locals>.train_step") == 1
    # b.step ran under a GradientTape: XLA compiled '__forward_step_<uid>', a name
    # both files' step share, so neither count can be told exactly
    assert counts.lookup(a, "step") == AMBIGUOUS
    assert counts.lookup(b, "step") == AMBIGUOUS
    # ... while their plain calls were attributed exactly: 3 shapes in a.py, 1 in b.py
    assert counts.exact[(a, "step", 4)] == 3
    assert counts.exact[(b, "step", 4)] == 1


def _fake_tf_module(traced_names: list[str]):
    """A stand-in for TF's polymorphic_function module: Function traces a new name per call."""
    import types

    class Concrete:
        def __init__(self, name: str) -> None:
            self.name = name.encode()

    class Function:
        def __init__(self, python_function, name, *args, **kwargs) -> None:
            self._python_function = python_function
            self._function_cache: dict[int, Concrete] = {}
            self.jit_compile = kwargs.get("jit_compile")

        def __call__(self, *args, **kwds):
            name = traced_names[len(self._function_cache)]
            self._function_cache[len(self._function_cache)] = Concrete(name)
            return self._python_function(*args, **kwds)

        def experimental_get_tracing_count(self) -> int:
            return len(self._function_cache)

    return types.SimpleNamespace(Function=Function)


def test_only_jit_forced_functions_are_noted(tmp_path: Path, monkeypatch) -> None:
    from autosig.verify.xla import patch_function_class

    source = tmp_path / "m.py"
    source.write_text("def step(x):\n    return x\n\n\ndef other(x):\n    return x\n")
    namespace: dict = {}
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    dump = tmp_path / "dump"
    monkeypatch.setenv("XLA_FLAGS", f"--xla_dump_to={dump}")

    forced = _fake_tf_module(["__inference_step_901", "__inference_step_902"])
    patch_function_class(forced, [str(source)], [str(source)])
    fn = forced.Function(namespace["step"], "step")
    assert fn.jit_compile is True
    fn(1)
    fn(2)
    noted = (dump / FUNCTIONS_FILE).read_text().splitlines()
    assert [json.loads(line)["name"] for line in noted] == [
        "__inference_step_901",
        "__inference_step_902",
    ]
    assert json.loads(noted[0])["qualname"] == "step"

    graph_only = _fake_tf_module(["__inference_other_903"])
    patch_function_class(graph_only, None, [str(source)])  # a graph run: timed, not noted
    graph_only.Function(namespace["other"], "other")(3)
    assert len((dump / FUNCTIONS_FILE).read_text().splitlines()) == 2
