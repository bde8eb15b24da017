"""``python -m pipeline.disksim [DRIVE ...] [--n N] [--png DIR]``: the validation table."""
from .validate import main

raise SystemExit(main())
