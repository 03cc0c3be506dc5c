"""Package discovery only; everything else is in pyproject.toml.

``[tool.setuptools.packages.find]`` finds the code under ``desktop/`` but cannot add the two data
packages that ``package-dir`` maps from the top-level ``catalog/`` and ``resources/`` folders, and a
hand-written list once left ``rigcheck.gui.pages`` out of the wheel. So: every package under desktop/
that has an ``__init__.py``, plus the two data packages.
"""

from setuptools import find_packages, setup

CODE = find_packages("desktop", include=["rigcheck", "rigcheck.*"])
setup(packages=[*CODE, "rigcheck.catalog", "rigcheck.resources"])
