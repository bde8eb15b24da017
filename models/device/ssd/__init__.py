"""Flash storage: one flash model, two front ends.

- ``flash``: what both share - the flash description ``FlashGeometry``, the back end's
  state, the command front end ``FlashDrive``;
- ``drive``: ``SSD``, a SATA drive behind NCQ, with its write buffer and non-queued FLUSH;
- ``nvme``: ``NVMe``, submission / completion queue pairs, a multi-core controller, the
  PCIe link;
- ``ftl``: the page-mapped FTL's state and preconditioning;
- compiled: ``packed`` (the state's layout), ``ftl_kernels`` (the FTL and garbage
  collection), ``calendar`` (channel calendars, the write buffer), ``kernels`` (the
  flash timing of each command);
- ``presets``: data-sheet drives."""
from .drive import SSD, SSDConfig
from .flash import FlashGeometry
from .nvme import NVMe, NVMeConfig

__all__ = ["SSD", "SSDConfig", "FlashGeometry", "NVMe", "NVMeConfig"]
