"""The experiment pipeline: the only layer that knows Hydra, Ray, DuckDB and pyarrow.

``python -m pipeline.run`` composes a config (conf/), validates it into a ``RunSpec``
(``spec``), builds the model stack (``build``, through ``registry``), runs one
configuration in-process or a sweep on Ray (``fanout``, via the launcher in
``hydra_plugins/pipeline_launcher``), and writes one Parquet file per run (``sink``);
``python -m pipeline.query`` answers questions over all results with DuckDB.
"""

from .numba_cache import configure as _configure_numba_cache

_configure_numba_cache()
