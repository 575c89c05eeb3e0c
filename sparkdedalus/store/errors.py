"""The store's errors: one line each, meant to be shown to the user as they are."""

from __future__ import annotations

from sparkdedalus.errors import UserError


class StoreError(UserError):
    """A run directory cannot be opened, written or read as asked (a one-line message)."""


class StoreLockedError(StoreError):
    """Another live writer holds the run directory's lock."""
