"""Python state read while tracing, and where the project changes it (``trace_state``).

Each case is a small project (a ``pyproject.toml`` marks its root): the traced module
``model.py`` and the files that may change what its trace reads. Pure: no TensorFlow.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autosig.analysis.module_view import ModuleView
from autosig.analysis.project_writes import OtherFiles, _project
from autosig.analysis.shape_reads import shape_use
from autosig.analysis.trace_state import state_reason
from autosig.source.discover import discover_text
from autosig.source.project_modules import ProjectModules

TF = "import tensorflow as tf\n"


def _changes(tmp_path: Path, files: dict[str, str], site: int = 0) -> list[str]:
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    _project.cache_clear()
    model = tmp_path / "model.py"
    wrapper, sites = discover_text(files["model.py"], str(model))
    function = sites[site].function
    params = [p.name.value for p in function.params.params if p.name.value != "self"]
    use = shape_use(ModuleView(wrapper, ProjectModules.around(model)), function, params)
    return [c.describe() for c in use.state_changes(OtherFiles(str(model)), "model.py")]


CHANGED = {
    "global_rebound_by_a_setter": (
        {
            "model.py": TF + "TEMPERATURE = 1.0\ndef set_temperature(t):\n    global TEMPERATURE\n"
            "    TEMPERATURE = t\n@tf.function\ndef f(x):\n    return x / TEMPERATURE\n"
        },
        "`TEMPERATURE` (line 8), which model.py:5 rebinds",
    ),
    "global_set_by_the_driver": (
        {
            "model.py": TF + 'PHASE = "warmup"\n@tf.function\ndef f(x):\n'
            '    return x * (0.0 if PHASE == "warmup" else 0.1)\n',
            "train.py": "import model\nmodel.PHASE = 'train'\n",
        },
        "`PHASE` (line 5), which train.py:2 may change",
    ),
    "global_set_by_setattr_in_the_driver": (
        {
            "model.py": TF + "SCALE = 1.0\n@tf.function\ndef f(x):\n    return x * SCALE\n",
            "train.py": "import model\nsetattr(model, 'SCALE', 2.0)\n",
        },
        "`SCALE` (line 5), which train.py:2 may change",
    ),
    "attribute_of_a_settings_object_set_by_the_driver": (
        {
            "model.py": TF
            + "class Settings:\n    def __init__(self):\n        self.threshold = 0.5\n"
            "class Detector(tf.Module):\n    def __init__(self, settings):\n"
            "        self.settings = settings\n    @tf.function\n    def __call__(self, s):\n"
            "        return s > self.settings.threshold\n",
            "train.py": "import model\nsettings = model.Settings()\nsettings.threshold = 0.8\n",
        },
        "`self.settings.threshold` (line 10), which train.py:3 may change",
    ),
    "module_dict_an_attribute_aliases": (
        {
            "model.py": TF + "CONFIG = {'noise': 0.0}\ndef schedule(epoch):\n"
            "    CONFIG['noise'] = 0.1 * epoch\nclass Policy(tf.Module):\n"
            "    def __init__(self):\n        self.config = CONFIG\n    @tf.function\n"
            "    def __call__(self, obs):\n        return obs + self.config['noise']\n"
        },
        "`self.config` (line 10), bound to `CONFIG`, which model.py:4 changes",
    ),
    "module_dict_changed_through_a_from_import": (
        {
            "model.py": TF + "CONFIG = {'noise': 0.0}\nclass Policy(tf.Module):\n"
            "    def __init__(self):\n        self.config = CONFIG\n    @tf.function\n"
            "    def __call__(self, obs):\n        return obs + self.config['noise']\n",
            "schedule.py": "from model import CONFIG\ndef step(epoch):\n"
            "    CONFIG.update(noise=0.1 * epoch)\n",
        },
        "`self.config` (line 8), bound to `CONFIG`, which schedule.py:3 may change",
    ),
    "project_module_variable_set_by_the_driver": (
        {
            "model.py": TF + "import hparams\n@tf.function\ndef f(x):\n"
            "    return x * (1.0 - hparams.SMOOTHING)\n",
            "hparams.py": "SMOOTHING = 0.0\n",
            "train.py": "import hparams\nhparams.SMOOTHING = 0.2\n",
        },
        "`hparams.SMOOTHING` (line 5), which train.py:2 may change",
    ),
    "project_module_variable_rebound_by_its_setter": (
        {
            "model.py": TF + "import hparams\n@tf.function\ndef f(x):\n"
            "    return x * hparams.SMOOTHING\n",
            "hparams.py": "SMOOTHING = 0.0\ndef fine_tune():\n    global SMOOTHING\n"
            "    SMOOTHING = 0.2\n",
        },
        "`hparams.SMOOTHING` (line 5), which hparams.py:4 rebinds",
    ),
    "a_helper_reads_it": (
        {
            "model.py": TF + "LIMIT = 1.0\ndef clip(x):\n    return tf.minimum(x, LIMIT)\n"
            "def relax():\n    global LIMIT\n    LIMIT = 2.0\n@tf.function\ndef f(x):\n"
            "    return clip(x)\n",
        },
        "`LIMIT` (line 4, in clip() (called at line 10)), which model.py:7 rebinds",
    ),
    "an_attribute_another_method_changes": (
        {
            "model.py": TF
            + "class M(tf.Module):\n    def __init__(self):\n        self.scale = 1.0\n"
            "    def anneal(self):\n        self.scale *= 0.5\n    @tf.function\n"
            "    def __call__(self, x):\n        return x * self.scale\n"
        },
        "`self.scale` (line 9), which model.py:6 changes",
    ),
}


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_state_the_project_changes_is_found(name: str, tmp_path: Path) -> None:
    files, expected = CHANGED[name]
    assert _changes(tmp_path, files) == [expected]


UNCHANGED = {
    "a_constant": {"model.py": TF + "SCALE = 2.0\n@tf.function\ndef f(x):\n    return x * SCALE\n"},
    "set_up_in_init_and_build": {
        "model.py": TF + "class L(tf.keras.layers.Layer):\n    def __init__(self):\n"
        "        super().__init__()\n        self.scale = 2.0\n    def build(self, shape):\n"
        "        self.w = self.add_weight(shape=(3,))\n    @tf.function\n"
        "    def call(self, x):\n        return x * self.scale + self.w\n"
    },
    "written_by_the_traced_code_itself": {  # AS103's finding
        "model.py": TF + "class M(tf.Module):\n    def __init__(self):\n        self.steps = 0\n"
        "    @tf.function\n    def __call__(self, x):\n        self.steps += 1\n"
        "        return x * self.steps\n"
    },
    "module_level_initialisation": {
        "model.py": TF + "CONFIG = {}\nCONFIG['scale'] = 2.0\n@tf.function\ndef f(x):\n"
        "    return x * CONFIG['scale']\n"
    },
    "a_local_of_the_same_name_elsewhere": {
        "model.py": TF + "SCALE = 2.0\ndef other():\n    SCALE = 3.0\n    return SCALE\n"
        "@tf.function\ndef f(x):\n    return x * SCALE\n"
    },
    "rebinding_an_imported_name_leaves_the_module_alone": {
        "model.py": TF + "CONFIG = {'a': 1.0}\nclass P(tf.Module):\n    def __init__(self):\n"
        "        self.config = CONFIG\n    @tf.function\n    def __call__(self, x):\n"
        "        return x * self.config['a']\n",
        "other.py": "from model import CONFIG\nCONFIG = {'a': 2.0}\n",
    },
}


@pytest.mark.parametrize("name", sorted(UNCHANGED))
def test_state_nothing_changes_is_not_a_change(name: str, tmp_path: Path) -> None:
    assert _changes(tmp_path, UNCHANGED[name]) == []


def test_the_reason_names_what_changes_it(tmp_path: Path) -> None:
    files, _ = CHANGED["global_rebound_by_a_setter"]
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text(files["model.py"])
    _project.cache_clear()
    wrapper, sites = discover_text(files["model.py"], str(tmp_path / "model.py"))
    use = shape_use(ModuleView(wrapper), sites[0].function, ["x"])
    reason = state_reason(use.state_changes(None, "model.py"))
    assert reason is not None
    assert "`TEMPERATURE` (line 8), which model.py:5 rebinds" in reason
    assert "tracing fewer times keeps an old value" in reason
    assert state_reason([]) is None


def _settings(tmp_path: Path, text: str) -> list[str]:
    from autosig.analysis.trace_state import settings_reads

    (tmp_path / "pyproject.toml").write_text("")
    model = tmp_path / "model.py"
    model.write_text(text)
    _project.cache_clear()
    wrapper, sites = discover_text(text, str(model))
    function = sites[0].function
    params = [p.name.value for p in function.params.params if p.name.value != "self"]
    use = shape_use(ModuleView(wrapper, ProjectModules.around(model)), function, params)
    return [r.code for r in settings_reads(use.state_reads)]


DETECTOR = (
    TF + "class Detector(tf.Module):\n    def __init__(self, settings, model):\n"
    "        self.settings = settings\n        self.model = model\n        self.scale = 2.0\n"
    "        self.sizes = [3, 4]\n        self.blocks = [model]\n"
    "    @tf.function\n    def __call__(self, x):\n        return {}\n"
)
SETTINGS = {
    # contract case settings_threshold_from_driver: a harness sets it between calls
    "another_objects_attribute": ("x > self.settings.threshold", ["self.settings.threshold"]),
    # contract case per_call_function_reads_config: a module dict the instance holds
    "a_module_dict_the_instance_holds": ("x * self.config['scale']", ["self.config"]),
    # review7 cfgsched: an item of a dict the caller handed it, changed between calls
    "an_item_of_a_dict_it_was_handed": ("x * self.settings['clip']", ["self.settings"]),
    # not settings: an item of a list it made itself, a layer of its own list called
    "an_item_of_its_own_list": ("x * self.sizes[0]", []),
    "a_layer_of_a_list_called": ("self.blocks[0](x)", []),
    # not settings: the instance's own attribute, a model called, its variables
    "the_instance_own_attribute": ("x * self.scale", []),
    "a_model_called": ("self.model(x)", []),
    "a_models_variables": ("x + len(self.model.trainable_variables)", []),
}


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_settings_code_outside_the_project_may_change(name: str, tmp_path: Path) -> None:
    body, expected = SETTINGS[name]
    text = DETECTOR.format(body)
    if "config" in body:
        text = text.replace("class Detector", "CONFIG = {'scale': 1.0}\nclass Detector").replace(
            "        self.scale = 2.0\n", "        self.scale = 2.0\n        self.config = CONFIG\n"
        )
    assert _settings(tmp_path, text) == expected


def test_shape_use_carries_the_state_reason_when_asked(tmp_path: Path) -> None:
    """``shape_use(display=...)``: the reason on the facts is the one trace_state gives
    for the same reads (the dimensions stage reads it there)."""
    from autosig.analysis.trace_state import settings_reason

    files, _ = CHANGED["global_rebound_by_a_setter"]
    (tmp_path / "pyproject.toml").write_text("")
    model = tmp_path / "model.py"
    model.write_text(files["model.py"])
    _project.cache_clear()
    wrapper, sites = discover_text(files["model.py"], str(model))
    asked = shape_use(
        ModuleView(wrapper),
        sites[0].function,
        ["x"],
        project=OtherFiles(str(model)),
        display="model.py",
    )
    plain = shape_use(ModuleView(wrapper), sites[0].function, ["x"])
    expected = state_reason(
        plain.state_changes(OtherFiles(str(model)), "model.py")
    ) or settings_reason(plain.state_reads)
    assert asked.state_reason is not None and asked.state_reason == expected
    assert plain.state_reason is None  # not asked: not looked for
