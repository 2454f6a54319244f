"""empathos: evaluate empathic support as a process (EMPA) and train policies for it (MAPO)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("empathos")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

__all__ = ["__version__"]
