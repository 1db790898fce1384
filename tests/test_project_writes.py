"""Attribute writes in the project's other files: the token scan, and AS106's per-instance
cache turning unsafe when another file may change what its trace reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from autosig.analysis.attribute_writes import ANY, scan_writes
from autosig.analysis.project_writes import ProjectWrites, project_root
from autosig.rewrite import engine
from autosig.rules.registry import select_rules
from autosig.rules.run import check_text

WRITES = {
    "assignment": ("p.threshold = 0.9\n", {"threshold": [1]}),
    "tuple targets": ("a.x, b.y = 1, 2\n", {"x": [1], "y": [1]}),
    "augmented": ("c.count += 1\n", {"count": [1]}),
    "annotated": ("s.t: float = 2.0\n", {"t": [1]}),
    "chained": ("a.b = c.d = 0\n", {"b": [1], "d": [1]}),
    "a path": ("p.cfg.depth = 1\n", {"cfg": [1], "depth": [1]}),
    "mutating call": ("d.items.append(3)\n", {"items": [1]}),
    "mutating call on a path": ("p.cfg.layers.append(4)\n", {"cfg": [1], "layers": [1]}),
    "mutating call after a subscript": ("p.groups['a'].append(1)\n", {"groups": [1]}),
    "mutating method passed on": ("list(map(p.seen.add, xs))\n", {"seen": [1]}),
    "more mutating methods": (
        "p.queue.appendleft(1)\np.mean.fill(0.0)\np.seen.difference_update(x)\n",
        {"queue": [1], "mean": [2], "seen": [3]},
    ),
    "mutating functions": (
        "random.shuffle(p.order)\nnp.copyto(p.mean, m)\nheapq.heappush(p.heap, 1)\n",
        {"order": [1], "mean": [2], "heap": [3]},
    ),
    "out= argument": ("np.multiply(p.w, 2, out=p.w)\n", {"w": [1]}),
    "item store": ("e.table[k] = 4\n", {"table": [1]}),
    "deletion": ("del f.gone\n", {"gone": [1]}),
    "for target": ("for i.idx in range(3):\n    pass\n", {"idx": [1]}),
    "comprehension target": ("r = [f(x) for p.scale in (1.0, 2.0)]\n", {"scale": [1]}),
    "with target": ("with open(x) as j.handle:\n    pass\n", {"handle": [1]}),
    "with tuple target": ("with a() as (p.x, p.y):\n    pass\n", {"x": [1], "y": [1]}),
    "one-line for body": ("for k in ks: p.table[k] = 0\n", {"table": [1]}),
    "one-line if body": ("if hasattr(p, 'cache'): del p.cache\n", {"cache": [1]}),
    "one-line try body": ("try: del p.cache\nexcept AttributeError: pass\n", {"cache": [1]}),
    "setattr by literal": ('setattr(g, "named", 1)\n', {"named": [1]}),
    "setattr by computed name": ("setattr(h, name, 1)\n", {ANY: [1]}),
    "setattr on a path": ('setattr(p.cfg, "depth", 1)\n', {"depth": [1], "cfg": [1]}),
    "__setattr__": (
        "p.__setattr__('scale', 3)\nobject.__setattr__(q, 'bias', 3)\n",
        {"scale": [1], "bias": [2]},
    ),
    "setattr passed on": ("f = functools.partial(setattr, p, 'scale')\n", {ANY: [1]}),
    "getattr target": ("getattr(p, 'cfg').depth = 1\n", {"depth": [1], "cfg": [1]}),
    "__dict__ update": ("o.__dict__.update(d)\n", {ANY: [1]}),
    "__dict__ alias": ("d = p.__dict__\nd['scale'] = 3\n", {ANY: [1]}),
    "vars update": ("vars(o).update(d)\n", {ANY: [1]}),
    "vars alias": ("state = vars(p)\n", {ANY: [1]}),
    "vars to setitem": ("operator.setitem(vars(p), 'scale', 3)\n", {ANY: [1]}),
    "__init__ run again": ("p.__init__(3.0)\nPredictor.__init__(q, 3.0)\n", {ANY: [1, 2]}),
    "continuation lines": ("(a.\n    b) = 1\n", {"b": [2]}),
    "backslash continuation": ("p.\\\n    beta = 3\n", {"beta": [2]}),
    "semicolons": ("x = 1; q.more = 2\n", {"more": [1]}),
    "a method of another class": (
        "class A:\n    def build(self):\n        self.model = 1\n",
        {"model": [3]},
    ),
    "__init__ writing another object": (
        "class A:\n    def __init__(self, o):\n        o.model = 1\n",
        {"model": [3]},
    ),
    "__init__ writing through its own attribute": (
        "class W:\n    def __init__(self, model):\n        self.model = model\n"
        "        self.model.threshold = 0.9\n        self.p.items.append(1)\n",
        {"threshold": [4], "p": [5], "items": [5]},
    ),
    "__init__ after rebinding self": (
        "class A:\n    def __init__(self, other):\n        self = other\n        self.scale = 3\n",
        {"scale": [4]},
    ),
    "__init__ lambda that runs later": (
        "class A:\n    def __init__(self):\n        self.cb = lambda e: self.history.append(e)\n",
        {"history": [3]},
    ),
    "a def nested in __init__": (
        "class A:\n    def __init__(self):\n        def f(x):\n            self.late = x\n",
        {"late": [4]},
    ),
    "a method after form feeds": (
        "class A:\n    def __init__(self):\n        self.scale = 1\n"
        "\f\f\f\f\f    def set(self, v):\n        self.scale = v\n",
        {"scale": [5]},
    ),
}

NOT_WRITES = {
    "reads": "y = p.threshold\nif k.kk == 1:\n    print(k.read)\n",
    "keyword arguments": "f(a=z.kw)\nx = g(b=w.v)\n",
    "comparisons": "ok = a.b == 1 or a.c <= 2 or a.d != 3 or a.e >= 4\n",
    "lambda defaults": "cb = lambda v=n.default: v\n",
    "def defaults": "def f(x=cfg.size):\n    return x\n",
    "comments and strings": '# c.comment = 3\ns = "text.str = 3"\n',
    "vars read": "print(vars(args))\nrun(**vars(args))\n",
    "setup in __init__": (
        "class A(B):\n    def __init__(self, m, **kw):\n        super().__init__()\n"
        "        super(A, self).__init__()\n        B.__init__(self, m)\n"
        "        self.model = m\n        self.items.append(1)\n"
        "        self.__dict__.update(kw)\n        setattr(self, 'k', 1)\n"
        "        for key in kw:\n            setattr(self, key, kw[key])\n"
    ),
    "empty and comment-only files": "# nothing\n",
    "match statement": "match command:\n    case {'a': 1}:\n        pass\n",
}


@pytest.mark.parametrize("text, expected", WRITES.values(), ids=list(WRITES))
def test_writes_are_found(text: str, expected: dict[str, list[int]]) -> None:
    assert scan_writes(text).attributes == expected


@pytest.mark.parametrize("text", NOT_WRITES.values(), ids=list(NOT_WRITES))
def test_reads_and_setup_are_not_writes(text: str) -> None:
    assert scan_writes(text).attributes == {}


def test_deep_copies_and_pickles_are_found() -> None:
    text = "a = copy.deepcopy(m)\nb = copy.copy(m)\npickle.dump(m, fh)\ns = dill.dumps(m)\n"
    assert scan_writes(text).copies == [1, 3, 4]


def test_deep_copies_and_pickles_are_found_through_import_aliases() -> None:
    text = (
        "from pickle import dump\nimport pickle as pkl\nfrom copy import deepcopy as dc\n"
        "from dill import dumps\n"
        "dump(p, fh)\npkl.dump(p, fh)\ndc(p)\npickle.Pickler(fh).dump(p)\ndumps(p)\n"
    )
    assert scan_writes(text).copies == [5, 6, 7, 8, 9]


def test_a_file_that_does_not_tokenize_may_write_anything() -> None:
    assert ANY in scan_writes("x = (\n").attributes


def test_the_project_is_the_folder_with_a_marker(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    assert project_root(package / "m.py") == tmp_path
    deep = tmp_path / "src" / "company" / "proj" / "models" / "vision"
    assert project_root(deep / "predictor.py") == tmp_path  # however deep


def test_hidden_folders_and_virtualenvs_are_not_scanned(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("")
    for folder in (".venv/lib", "env", "pkg", "build", "pkg/build"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "w.py").write_text("p.threshold = 1\n")
    (tmp_path / "env" / "pyvenv.cfg").write_text("")
    own = tmp_path / "pkg" / "m.py"
    own.write_text("p.threshold = 2\n")
    project = ProjectWrites.read(tmp_path)
    places = [p.describe(project.root) for p in project.writes("threshold", own.resolve())]
    assert places == ["pkg/build/w.py:1", "pkg/w.py:1"]  # build/ left out at the root only
    assert project.complete


def test_without_a_marker_only_the_folder_and_its_packages_are_scanned(tmp_path: Path) -> None:
    """A script in a folder no project marker is above (``~/Downloads``, ``/tmp``): what
    it can import, not every folder below (a one-file check there took 15 s in /tmp)."""
    folder = tmp_path / "downloads"
    for sub in ("", "pkg", "pkg/sub", "notes", "other", "other/pkg"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
        (folder / sub / "w.py").write_text("p.threshold = 1\n")
    for package in ("pkg", "pkg/sub", "other", "other/pkg"):
        (folder / package / "__init__.py").write_text("")
    (folder / "other" / "setup.py").write_text("")  # another project, not this script's
    own = folder / "m.py"
    own.write_text("p.threshold = 2\n")
    project = ProjectWrites.read(folder)
    places = [p.describe(project.root) for p in project.writes("threshold", own.resolve())]
    assert places == ["pkg/sub/w.py:1", "pkg/w.py:1", "w.py:1"]
    assert project.complete
    (folder / "pyproject.toml").write_text("")  # with a marker: every folder below
    project = ProjectWrites.read(folder)
    places = [p.describe(project.root) for p in project.writes("threshold", own.resolve())]
    assert places == [
        "notes/w.py:1",
        "other/pkg/w.py:1",
        "other/w.py:1",
        "pkg/sub/w.py:1",
        "pkg/w.py:1",
        "w.py:1",
    ]


def test_every_question_sees_a_file_the_scan_finds_setting_any_attribute(tmp_path: Path) -> None:
    """The text filter in front of the token scan never hides what the scan would find:
    ``Base.__init__(self)`` outside ``__init__`` re-sets any attribute, whether or not
    the file's text happens to hold the asked name (``next_start_step``, ``_start_step``)."""
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "reset.py").write_text(
        "class Schedule(Base):\n"
        "    def __init__(self):\n"
        "        Base.__init__(self)\n"  # set-up: not a change
        "\n"
        "    def restart(self, next_start_step):\n"
        "        Base.__init__(self)\n"
    )
    (tmp_path / "setup_only.py").write_text(
        "class A(Base):\n    def __init__(self):\n        Base.__init__(self)\n"
    )
    own = (tmp_path / "m.py").resolve()
    project = ProjectWrites.read(tmp_path.resolve())
    for attribute in ("_start_step", "threshold", "start_step"):
        assert [p.describe(project.root) for p in project.writes(attribute, own)] == ["reset.py:6"]


def test_a_name_inside_a_longer_name_is_not_a_write(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "w.py").write_text("p.thresholds = [1]\np.threshold_old = 2\n")
    (tmp_path / "v.py").write_text("p.threshold = 1\n")
    own = (tmp_path / "m.py").resolve()
    project = ProjectWrites.read(tmp_path.resolve())
    assert [p.describe(project.root) for p in project.writes("threshold", own)] == ["v.py:1"]
    assert [p.describe(project.root) for p in project.writes("thresholds", own)] == ["w.py:1"]


def test_an_unreadable_folder_makes_the_project_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "setup.py").write_text("")
    locked = tmp_path / "data" / "locked"
    locked.mkdir(parents=True)
    iterdir = Path.iterdir

    def refusing(folder: Path):  # what a folder of mode 000 does for a normal user
        if folder == locked:
            raise PermissionError(13, "Permission denied", str(folder))
        return iterdir(folder)

    monkeypatch.setattr(Path, "iterdir", refusing)
    project = ProjectWrites.read(tmp_path)
    assert not project.complete
    assert project.paths == [tmp_path / "setup.py"]


# -- AS106's cache, judged across the project ---------------------------------------------

PREDICTOR = """import tensorflow as tf


class Predictor:
    def __init__(self, scale):
        self.scale = scale

    def predict(self, x):
        @tf.function
        def step(x):
            return x * self.scale

        return step(x)
"""


def _project(tmp_path: Path, **others: str) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    model = tmp_path / "model.py"
    model.write_text(PREDICTOR)
    for name, text in others.items():
        (tmp_path / f"{name}.py").write_text(text)
    return model


def _fix(model: Path, *, unsafe: bool = True) -> engine.FixResult:
    rules = select_rules(("AS106",))
    return engine.fix_text(PREDICTOR, str(model), plan=None, rules=rules, unsafe_fixes=unsafe)


def _safety(model: Path) -> list[str]:
    return [fix.safety for fix in _fix(model).applied if fix.code == "AS106"]


def test_safe_when_no_other_file_changes_what_the_trace_reads(tmp_path: Path) -> None:
    script = "from model import Predictor\n\np = Predictor(2.0)\nprint(p.predict(1.0), p.scale)\n"
    other = "class Other:\n    def __init__(self):\n        self.scale = 3\n"
    assert _safety(_project(tmp_path, train=script, other=other)) == ["safe"]


def test_stdin_has_no_project_to_look_in(tmp_path: Path) -> None:
    _project(tmp_path, train="p.scale = 3.0\n")
    result = engine.fix_text(
        PREDICTOR, "<stdin>", plan=None, rules=select_rules(("AS106",)), unsafe_fixes=False
    )
    assert [fix.safety for fix in result.applied] == ["safe"]


@pytest.mark.parametrize(
    "script, reason",
    [
        ("p = Predictor(2.0)\np.scale = 3.0\n", "`self.scale`, which train.py:3 may change"),
        ("p = Predictor(2.0)\nsetattr(p, key, 3.0)\n", "`self.scale`, which train.py:3 may"),
        ("import copy\nq = copy.deepcopy(Predictor(1.0))\n", "train.py:3 deep-copies"),
    ],
    ids=["rebinds", "setattr", "deepcopy"],
)
def test_unsafe_when_another_file_may_change_it(tmp_path: Path, script: str, reason: str) -> None:
    model = _project(tmp_path, train="from model import Predictor\n" + script)
    assert _safety(model) == ["unsafe"]
    assert _fix(model, unsafe=False).new_text == PREDICTOR
    (finding,) = check_text(PREDICTOR, str(model), select=["AS106"])
    assert reason in finding.message


def test_unsafe_when_part_of_the_project_could_not_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autosig.analysis import project_writes

    monkeypatch.setattr(project_writes, "MAX_FILE_BYTES", 10)
    model = _project(tmp_path, train="from model import Predictor\nprint(Predictor(1.0))\n")
    assert _safety(model) == ["unsafe"]
    (finding,) = check_text(PREDICTOR, str(model), select=["AS106"])
    assert "not every file of the project could be checked" in finding.message


def test_a_method_the_trace_calls_replaced_elsewhere_makes_it_unsafe(tmp_path: Path) -> None:
    source = PREDICTOR.replace("return x * self.scale", "return self._pre(x) * 2.0").replace(
        "        self.scale = scale\n",
        "        self.scale = scale\n\n    def _pre(self, x):\n        return x + 1.0\n",
    )
    safety = {}
    for name, script in {
        "patched": "import model\nmodel.Predictor._pre = lambda s, x: x\n",
        "plain": "import model\nprint(model.Predictor._pre)\n",
    }.items():
        project = tmp_path / name
        project.mkdir()
        (project / "pyproject.toml").write_text("")
        (project / "model.py").write_text(source)
        (project / "patch.py").write_text(script)
        result = engine.fix_text(
            source,
            str(project / "model.py"),
            plan=None,
            rules=select_rules(("AS106",)),
            unsafe_fixes=True,
        )
        safety[name] = [fix.safety for fix in result.applied]
    assert safety == {"patched": ["unsafe"], "plain": ["safe"]}
