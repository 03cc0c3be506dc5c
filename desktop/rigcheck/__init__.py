"""RigCheck: will this model run on this machine, how fast, and if not, what would it take?"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("rigcheck")
except PackageNotFoundError:  # running from a checkout without an install
    __version__ = "0+unknown"

__all__ = ["__version__"]
