"""Hydra launcher plugin of this project: ``hydra/launcher=ray`` (default) and ``serial``.

Hydra finds launchers only in the ``hydra_plugins`` namespace package, so the
launcher lives here; the work is in ``pipeline.fanout``. Why our own and not
hydra-ray-launcher: see ``launcher.py``.
"""
