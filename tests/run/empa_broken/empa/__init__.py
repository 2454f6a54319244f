"""An 'empa' package without the release's API (tests the incompatible-package line)."""

__version__ = "0.0.0+broken"
