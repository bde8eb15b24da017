"""Flash storage: one flash model, two front ends. ``drive`` (``SSD``: a SATA drive
behind NCQ, with its write buffer and FLUSH; ``FlashGeometry``, the shared flash
description), ``nvme`` (``NVMe``: submission / completion queue pairs, the PCIe link,
power-loss protection), ``ftl`` (the page-mapped FTL's state and preconditioning),
``kernels`` (the compiled FTL, garbage collection and flash timing), ``presets``
(data-sheet drives)."""
from .drive import SSD, FlashGeometry, SSDConfig
from .nvme import NVMe, NVMeConfig

__all__ = ["SSD", "SSDConfig", "FlashGeometry", "NVMe", "NVMeConfig"]
