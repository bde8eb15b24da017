"""MyISAM: the index file's B-trees and block placement (``keyfile``). The insert path
that writes them through the key cache and the OS is the ``myisam_insert`` workload
(``models/workload/myisam_insert.py``)."""
from .keyfile import KeyFile, KeyFileConfig

__all__ = ["KeyFile", "KeyFileConfig"]
