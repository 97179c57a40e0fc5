"""The package version (kept apart so the CLI can show it without importing numpy)."""

__version__ = "0.1.0"
