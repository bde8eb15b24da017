"""Plot styles of the reports (``pipeline.report``), one module per style, each
drawing from plain summary rows (dicts of a run's columns) and optional published
overlays, so it works for any sweep as well as for the validation's reference cases:

- ``bars``: one bar per configuration (or groups by a hue parameter) per metric panel,
  published values beside or on them - placements, fsync/s per case, scan time per
  read-ahead mode, the async-I/O table;
- ``lines``: a metric against a numeric parameter (throughput vs concurrency), one line
  per configuration of the other varying parameters, published points as markers;
- ``cdf``: measured and simulated response-time CDFs overlaid, one panel per run
  (disk validation).
"""
