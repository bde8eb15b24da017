"""Pure simulation models of the database storage I/O stack.

Layers (imports point downward only): workload -> engine -> fs -> block -> device,
all on the event kernel in ``models.sim``. Nothing here imports hydra, ray, duckdb or
pyarrow; ``pipeline`` is the only layer that knows about them.
"""
