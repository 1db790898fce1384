"""Static commands never run the code they read; profiles are data, never code.

* A tree whose modules (and a fake ``tensorflow`` package, ``conftest.py``,
  ``__init__.py``) create a marker file when imported: ``check``, ``fix``, ``fix --diff``,
  ``fix --patch-out`` and ``apply`` must leave no marker.
* Sample files are loaded with ``allow_pickle=False``: an ``.npz`` holding a pickle
  whose unpickling would create a marker is refused.
* A profile cannot make ``fix`` write outside the PATHs it was given, nor import the
  modules it names, nor put its strings into the source as code.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autosig.profile.format import CallSignature, FunctionRecord, ParamInfo, Profile
from autosig.source.hashing import source_hash_from_file_text

MARK = "PWNED"
IMPORT_BOMB = f"""\
import pathlib
pathlib.Path(__file__).resolve().parent.joinpath("{MARK}").write_text(__name__)
"""
TARGET = """\
import tensorflow as tf


@tf.function
def step(x):
    print(x)
    return x * 2
"""
AUTOSIG = Path(sys.executable).with_name("autosig")


def autosig(args: list[str], cwd: Path, pythonpath: bool = True) -> subprocess.CompletedProcess:
    """Run the console script in ``cwd``, by default with ``cwd`` on PYTHONPATH (as in a
    project whose own modules, and a fake ``tensorflow``, would win any import)."""
    cmd = [str(AUTOSIG)]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    if pythonpath:
        env["PYTHONPATH"] = str(cwd)
    return subprocess.run(
        [*cmd, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120
    )


def markers(root: Path) -> list[Path]:
    return sorted(root.rglob(MARK))


@pytest.fixture
def booby_trapped(tmp_path: Path) -> Path:
    """A project whose every importable file leaves a marker when imported."""
    root = tmp_path / "proj"
    files = {
        "pkg/__init__.py": IMPORT_BOMB,
        "pkg/model.py": IMPORT_BOMB + TARGET,
        "train.py": IMPORT_BOMB + TARGET + "\nif __name__ == '__main__':\n    step(1)\n",
        "conftest.py": IMPORT_BOMB,
        "tensorflow/__init__.py": IMPORT_BOMB + "def function(f=None, **kw):\n    return f\n",
        "setup.py": IMPORT_BOMB,
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert not markers(root)
    return root


def test_static_commands_never_import_the_code_they_read(booby_trapped: Path) -> None:
    root = booby_trapped
    runs = [
        autosig(["check", "."], root),
        autosig(["fix", ".", "--diff"], root),
        autosig(["fix", ".", "--patch-out", "out.patch"], root),
        autosig(["apply", "out.patch", "--dry-run"], root),
        autosig(["fix", "."], root),
        autosig(["check", "pkg/model.py", "train.py"], root),
    ]
    for result in runs:
        assert "Traceback" not in result.stderr, result.stderr
    assert runs[0].returncode == 1 and "train.py:8:5: AS101" in runs[0].stdout
    assert "tf.print(x)" in (root / "train.py").read_text()  # fix really ran
    assert not markers(root), [p.read_text() for p in markers(root)]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="python -P is new in 3.11")
def test_python_dash_m_with_safe_path_imports_nothing_from_the_tree(booby_trapped: Path) -> None:
    """``python -m`` puts the current directory first on sys.path, so a tree holding
    ``click.py`` or ``autosig.py`` would be imported by Python itself before autosig
    runs. The console script and ``python -P -m autosig`` (PYTHONSAFEPATH) do not."""
    root = booby_trapped
    for name in ("click.py", "libcst.py", "autosig.py", "unidiff.py", "sitecustomize.py"):
        (root / name).write_text(IMPORT_BOMB)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    result = subprocess.run(
        [sys.executable, "-P", "-m", "autosig", "check", "."],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert "train.py:8:5: AS101" in result.stdout
    assert not markers(root), [p.read_text() for p in markers(root)]
    console = autosig(["check", "."], root, pythonpath=False)
    assert console.returncode == 1 and not markers(root)


def _npz_with_pickle(path: Path, marker: Path) -> None:
    """An .npz whose single member is an object array: loading it would run code."""

    class Bomb:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.system, (f"touch {marker}",))

    import numpy as np

    array = np.empty(1, dtype=object)
    array[0] = Bomb()
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x.npy", buffer.getvalue())


def test_samples_never_unpickle(tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    from autosig.errors import AutosigError
    from autosig.profile.samples import load_arrays, load_samples

    marker = tmp_path / MARK
    npz = tmp_path / "profile.npz"
    _npz_with_pickle(npz, marker)
    with pytest.raises(AutosigError, match="profile.npz"):
        load_arrays(npz)
    (tmp_path / "profile.json").write_text(
        json.dumps({**Profile().to_json(), "samples_file": "profile.npz"})
    )
    with pytest.raises(AutosigError):
        load_samples(tmp_path / "profile.json")
    assert not marker.exists()


def _profile_for(root: Path, rel: str, text: str, **record: object) -> Profile:
    """A profile whose function matches ``text`` (so fix uses it) with two shapes seen."""
    shapes = record.pop("shapes", ([2, 3], [5, 3]))
    dtype = record.pop("dtype", "float32")
    signatures = [
        CallSignature(
            args={"x": {"kind": "tensor", "shape": shape, "dtype": dtype}},
            passed={"x": "positional"},
            calls=1,
            traces=1,
        )
        for shape in shapes  # type: ignore[union-attr]
    ]
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines, 1) if line.lstrip().startswith("def "))
    fields: dict[str, object] = {
        "path": rel,
        "qualname": "step",
        "line": first,
        "source_sha256": source_hash_from_file_text(text, first, len(lines)),
        "editable": True,
        "calls": 2,
        "traces": 2,
        "signatures": signatures,
        "params": [ParamInfo("x", "POSITIONAL_OR_KEYWORD")],
    }
    fields.update(record)
    return Profile(functions=[FunctionRecord(**fields)], project_root=str(root))  # type: ignore[arg-type]


def test_profile_paths_outside_the_project_are_never_written(tmp_path: Path) -> None:
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (project / "mine.py").write_text(TARGET)
    victim = outside / "victim.py"
    victim.write_text(TARGET)
    records = []
    for rel in ("../outside/victim.py", str(victim), "/etc/../" + str(victim)[1:]):
        records.extend(_profile_for(project, rel, TARGET).functions)
    records.extend(_profile_for(project, "mine.py", TARGET).functions)
    profile = Profile(functions=records, project_root=str(project))
    (project / "p.json").write_text(profile.dumps())
    said = ""
    for args in (["fix", ".", "--profile", "p.json"], ["fix", "mine.py", "--profile", "p.json"]):
        result = autosig(args, project)
        assert "Traceback" not in result.stderr, result.stderr
        assert victim.read_text() == TARGET
        said += result.stdout + result.stderr
    mine = (project / "mine.py").read_text()
    # the profile was used: a signature, or (a short profile) the guarded relaxed trace,
    # written or named as unsafe (its seeding would be the module's first TF work)
    assert "input_signature" in mine or "guarded relaxed trace" in mine + said, said
    # a profile whose project root is elsewhere (the victim's directory) changes nothing
    elsewhere = Profile(
        functions=_profile_for(outside, "victim.py", TARGET).functions, project_root=str(outside)
    )
    (project / "q.json").write_text(elsewhere.dumps())
    result = autosig(["fix", ".", "--profile", "q.json"], project)
    assert "Traceback" not in result.stderr
    assert victim.read_text() == TARGET
    assert not list(outside.glob("*autosig-tmp*"))


def test_profile_never_imports_the_modules_it_names(tmp_path: Path) -> None:
    (tmp_path / "evil_types.py").write_text(IMPORT_BOMB + "class Point(tuple):\n    pass\n")
    (tmp_path / "mine.py").write_text(TARGET)
    profile = _profile_for(tmp_path, "mine.py", TARGET)
    record = profile.functions[0]
    point = {
        "kind": "namedtuple",
        "type": "evil_types.Point",
        "fields": ["a"],
        "items": [{"kind": "python", "type": "int", "value": 1}],
    }
    record.signatures[0].args["x"] = point
    record.decorator_options = {"jit_compile": "__import__('evil_types')"}
    record.object_instances = {"x": 2}
    (tmp_path / "p.json").write_text(profile.dumps())
    for args in (["explain", "p.json"], ["fix", "mine.py", "--profile", "p.json", "--diff"]):
        result = autosig(args, tmp_path)
        assert "Traceback" not in result.stderr, result.stderr
    assert not markers(tmp_path)


@pytest.mark.parametrize(
    "field, value",
    [
        ("dtype", "float32), __import__('os').system('touch PWNED'"),
        ("shapes", ([2, "__import__('os').system('touch PWNED')"],) * 2),
        ("shapes", ([2, "3)] + [__import__('os')"], [5, "3)] + [__import__('os')"])),
    ],
    ids=["dtype", "dimension", "dimension-breakout"],
)
def test_profile_strings_never_become_code(tmp_path: Path, field: str, value: object) -> None:
    """Every spec written into the source comes from validated numbers and dtype names."""
    (tmp_path / "mine.py").write_text(TARGET)
    profile = _profile_for(tmp_path, "mine.py", TARGET, **{field: value})
    (tmp_path / "p.json").write_text(profile.dumps())
    result = autosig(["fix", "mine.py", "--profile", "p.json"], tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    text = (tmp_path / "mine.py").read_text()
    assert "__import__" not in text and "system" not in text, text
    assert result.returncode in (0, 1, 2)
