"""Facts about source code that both the static rules and inference read.

Which dimensions traced code reads statically (``shape_reads``), where it needs a Python
value (``python_values``), what TensorFlow APIs do with their arguments (``tf_apis``),
where an ``optimizer.build(...)`` may go (``optimizer_build``) and how a lazily built
Keras model is built before a step's first call (``model_build``), which distributed dataset
a step's calls take elements of (``dataset_elements``), and what the project's other
files write (``project_writes``, ``attribute_writes``). Pure: libcst, ``ast`` and
tokens over the user's text, never a profile, never TensorFlow, never the user's code.

Import from the modules. This file imports nothing, on purpose: each analysis loads
libcst, and ``check`` on a tree with no tf.function must not pay for it.
"""
