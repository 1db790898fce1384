"""Start-up: a command imports only what it needs (libcst only to parse a file that may
hold a tf.function), and the rule metadata read without importing the rules is right.

Timings are measured by ``scripts/bench_startup.py``; these tests pin the cause of a
slow start (an import), which does not depend on the machine's load.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from autosig.rules import registry

WATCHED = (
    "libcst",
    "libcst.matchers",
    "libcst.codemod",
    "multiprocessing",
    "tensorflow",
    "numpy",
    "autosig.rules.as101_print",
    "autosig.rules.as102_random",
)

PROBE = """\
import atexit, sys
def report():
    heavy = sorted(m for m in WATCHED if m in sys.modules)
    print("IMPORTED:" + ",".join(heavy), file=sys.stderr)
atexit.register(report)
from autosig.cli import main
main(sys.argv[1:])
"""


def imported(
    args: list[str], cwd: Path, stdin: str = "", watched: tuple[str, ...] = WATCHED
) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-c", f"WATCHED = {watched!r}\n" + PROBE, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = [x for x in result.stderr.splitlines() if x.startswith("IMPORTED:")]
    assert line, result.stderr
    return set(filter(None, line[-1].removeprefix("IMPORTED:").split(",")))


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["rule", "AS101"],
        ["rule"],
        ["rule", "--format", "json"],
        ["check", "plain.py"],
        ["check", "--select", "AS101,AS2", "--ignore", "AS102", "plain.py"],
        ["check"],
        ["fix", "plain.py", "--diff"],
    ],
    ids=" ".join,
)
def test_commands_that_parse_nothing_never_import_libcst(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "plain.py").write_text("def f(x):\n    return x + 1\n")
    assert imported(args, tmp_path) == set()


def test_check_of_a_file_with_a_tf_function_imports_libcst(tmp_path: Path) -> None:
    """The probe can fail: parsing a file that may hold a site does import libcst."""
    (tmp_path / "m.py").write_text(
        "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    return x\n"
    )
    modules = imported(["check", "m.py"], tmp_path)
    assert "libcst" in modules
    assert not modules & HEAVY, modules
    # rules the file cannot trigger are not even imported (rules.registry.TEXT_NEEDED)
    assert not modules & {"autosig.rules.as101_print", "autosig.rules.as102_random"}


def test_a_cold_check_without_a_config_loads_no_writer_hasher_or_toml_reader(
    tmp_path: Path,
) -> None:
    """``check --no-cache`` writes nothing, hashes nothing and, with no config file above
    it, reads no TOML: ``tempfile`` (with ``shutil``, ``random``, ``bz2``, ``lzma``),
    ``hashlib`` and ``tomllib`` stay unloaded (about 0.02 s of a 0.3 s target)."""
    (tmp_path / "m.py").write_text(
        "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    print(x)\n    return x\n"
    )
    watched = ("tempfile", "hashlib", "tomllib", "libcst")
    assert imported(["check", "--no-cache", "m.py"], tmp_path, watched=watched) == {"libcst"}


HEAVY = {"tensorflow", "numpy", "libcst.matchers", "libcst.codemod", "multiprocessing"}
"""What no static command needs for an ordinary file: TensorFlow and NumPy (never),
``libcst.matchers`` (0.2-0.4 s of generated classes), libcst's codemod framework, and
``multiprocessing`` (only a worker pool needs it)."""


@pytest.mark.parametrize(
    "body",
    [
        "    print('step', x)\n    return x\n",  # AS101, the most common finding
        "    print(f'tracing {x}')\n    return x\n",  # a print that logs tracing
        "    import random\n    return x * random.random()\n",  # AS102
        "    out = []\n    for r in x:\n        out.append(r)\n    return out\n",  # AS104
        "    return float(x)\n",  # AS105
    ],
    ids=["print", "trace-log", "random", "append", "float"],
)
@pytest.mark.parametrize("command", [["check"], ["fix", "--diff"]], ids=" ".join)
def test_common_findings_import_nothing_heavy(
    tmp_path: Path, body: str, command: list[str]
) -> None:
    (tmp_path / "m.py").write_text("import tensorflow as tf\n\n@tf.function\ndef f(x):\n" + body)
    modules = imported([*command, "m.py"], tmp_path)
    assert "libcst" in modules
    assert not modules & HEAVY, modules


def test_rule_metadata_read_from_source_equals_the_imported_rules() -> None:
    codes = [rule.code for rule in registry.ALL_RULES]
    assert codes == list(registry.STATIC_CODES)
    for rule in registry.ALL_RULES:
        doc = registry._static_doc(rule.code)
        assert (doc.name, doc.summary, doc.fix_safety) == (rule.name, rule.summary, rule.fix_safety)
        assert doc.skeleton_keeps == rule.skeleton_keeps
        assert registry.rule_doc(rule.code) == inspect.cleandoc(rule.__doc__ or "")
        assert registry.get_rule(rule.code) is rule
    assert [type(r) for r in registry.select_rules()] == list(registry.ALL_RULES)


def test_every_plan_fix_kind_loads_with_its_registered_code() -> None:
    from autosig.rewrite import fix_kinds

    assert [kind.code for kind in fix_kinds.kinds()] == [e.code for e in fix_kinds.PLAN_FIXES]
    assert len({e.code for e in fix_kinds.PLAN_FIXES}) == len(fix_kinds.PLAN_FIXES)


@pytest.mark.tf
@pytest.mark.slow
def test_the_tensorflow_supertype_tests_leave_no_temporary_folders(tmp_path: Path) -> None:
    """Run some of tests/test_supertype_tf.py with TMPDIR pointing at an empty folder."""
    pytest.importorskip("tensorflow")
    import os

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "--basetemp",
            str(tmp_path / "basetemp"),
            "-k",
            "varying_shapes or python_int_sizing",
            str(root / "tests" / "test_supertype_tf.py"),
        ],
        cwd=root,
        env={**os.environ, "TMPDIR": str(tmp), "TF_CPP_MIN_LOG_LEVEL": "2"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    assert sorted(p.name for p in tmp.iterdir()) == []
