"""The hard disk drive: ``drive`` (``HDD``, the device the block layer sees, and the
15k SAS preset), ``config`` (``HDDConfig``, ``HDDZone``), ``datasheet`` (a drive built
from data-sheet figures), and the compiled mechanism behind it - ``layout`` (LBA ->
platter), ``mech`` (seek, rotation, transfer, SPTF), ``buffer`` (segments, read-ahead),
``cache`` (the command entry points, reads), ``write`` (writes, the write cache,
FLUSH), ``state`` (the state vector's slot numbers). What is modelled is ``drive``'s
docstring."""
from .config import SECTOR_BYTES, HDDConfig, HDDZone, hdd_config_fields
from .drive import HDD, default_15k_sas

__all__ = ["HDD", "HDDConfig", "HDDZone", "SECTOR_BYTES", "default_15k_sas", "hdd_config_fields"]
