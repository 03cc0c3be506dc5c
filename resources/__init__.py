"""Icons, desktop entry and metainfo, shipped inside the package as ``rigcheck.resources``."""
