"""TinyNet: a minimal research-style training package."""

__version__ = "0.1.0"
