"""The Qt-free core: probing, the Machine snapshot, catalog, estimation, compatibility, reports.

Nothing under this package may import PySide6, shiboken6 or pyqtgraph; ruff's TID251 rule and
``tests/test_boundaries.py`` fail the test run otherwise.
"""
