"""Bootstrap of ``autosig profile``: start the recorder in every Python process of CMD.

``autosig profile`` puts this directory first on ``PYTHONPATH``, so Python imports this
file at start-up in the command's Python processes and their Python children. It
1. runs the ``sitecustomize`` it shadows (if the environment had one),
2. imports the modules named in ``$AUTOSIG_BOOTSTRAP`` (comma-separated; the verifier
   installs its import hook this way, before anything is recorded),
3. waits for TensorFlow: a tiny import hook starts the recorder right after TensorFlow
   defines its Function class (nothing of autosig is imported by processes that never
   import TensorFlow); the recorder writes a partial profile into
   ``$AUTOSIG_PROFILE_DIR`` when the process ends.
A failure here is reported on one line and never stops the user's program.
"""

from __future__ import annotations


def _chain_shadowed_sitecustomize(here: str) -> None:
    import importlib.machinery
    import importlib.util
    import os
    import sys

    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    ours = sys.modules.get("sitecustomize")
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        if ours is not None:
            sys.modules["sitecustomize"] = ours


def _import_autosig_recorder():  # noqa: ANN202
    import os
    import sys

    try:
        from autosig.profile import recorder
    except ImportError:
        parent = os.environ.get("AUTOSIG_PACKAGE_PARENT")
        if not parent:
            raise
        sys.path.append(parent)
        try:
            from autosig.profile import recorder
        finally:
            sys.path.remove(parent)
    return recorder


def _bootstrap() -> None:
    import importlib
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    try:
        _chain_shadowed_sitecustomize(here)
    except Exception as exc:  # noqa: BLE001
        print(f"autosig: the environment's sitecustomize failed: {exc!r}", file=sys.stderr)
    for name in filter(
        None, (n.strip() for n in os.environ.get("AUTOSIG_BOOTSTRAP", "").split(","))
    ):
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001
            print(f"autosig: bootstrap module {name} failed: {exc!r}", file=sys.stderr)
    if not os.environ.get("AUTOSIG_PROFILE_DIR"):
        return
    import atexit

    atexit.register(_die_of_sigint_if_interrupted)  # first registered: runs last
    if POLY_MODULE in sys.modules:
        _activate()
    else:
        sys.meta_path.insert(0, _StartRecorderOnTensorFlow())


def _die_of_sigint_if_interrupted() -> None:
    """Keep Ctrl-C's exit status (130) when the recorder's exit work ran after it.

    Python exits by SIGINT after an unhandled KeyboardInterrupt, but forgets to when
    an atexit handler imports a module (writing the profile does), and exits 1. This
    handler runs after every other one and ends the process by SIGINT itself.
    """
    import os
    import signal
    import sys

    last = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
    if not isinstance(last, KeyboardInterrupt):
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001, S110 - a closed stream has nothing to flush
            pass
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)


POLY_MODULE = "tensorflow.python.eager.polymorphic_function.polymorphic_function"


def _activate() -> None:
    import sys

    try:
        _import_autosig_recorder().activate_from_env()
    except Exception as exc:  # noqa: BLE001
        print(f"autosig: recorder not started in this process: {exc!r}", file=sys.stderr)


class _StartRecorderOnTensorFlow:
    """Meta path finder: once TensorFlow's Function class exists, start the recorder."""

    def find_spec(self, name, path, target=None):  # noqa: ANN001, ANN201
        import sys

        if name != POLY_MODULE:
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(name, path, target) if find_spec else None
            if spec is not None:
                break
        else:
            return None
        exec_module = getattr(spec.loader, "exec_module", None)
        if exec_module is None:
            return spec

        def exec_then_record(module):  # noqa: ANN001, ANN202
            exec_module(module)
            _activate()

        spec.loader.exec_module = exec_then_record
        return spec


_bootstrap()
