"""AS106, a tf.function created again and again: the rule and the analysis behind it.

``rule.py`` (the rule: docs, examples, report), ``sites.py`` (which creations are
re-created, each with its fix), ``hoist.py`` (the fix out of a loop), ``cache.py`` and
``cache_safety.py`` (the fix that caches a per-call creation on the instance, and
whether what its trace reads can change). Imports nothing here: ``autosig rule`` and
code selection read the rule's source without loading libcst.
"""
