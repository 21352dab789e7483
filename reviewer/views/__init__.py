"""Reviewer views, one module per page family; each view is thin (load scoped rows, call a core, render)."""
