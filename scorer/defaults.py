"""Defaults shared by the CLI and the library, in a module that imports nothing heavy."""

DEFAULT_JUDGE = "deepseek-v4-pro"
"""The judge used unless --judge-model names another (SPEC section 6)."""
DUMP_LIMIT = 4096
"""Bytes (UTF-8) of the request dump shown to the judge."""

__all__ = ["DEFAULT_JUDGE", "DUMP_LIMIT"]
