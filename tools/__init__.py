"""Helpers that run outside the app (not part of the installed package)."""
