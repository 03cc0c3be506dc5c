"""RigCheck: will this model run on this machine, how fast, and if not, what would it take?"""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # Looked up on first use: importlib.metadata costs ~50 ms at start-up, paid only by --version
    # and the About box.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("rigcheck")
        except PackageNotFoundError:  # running from a checkout without an install
            return "0+unknown"
    raise AttributeError(f"module 'rigcheck' has no attribute {name!r}")
