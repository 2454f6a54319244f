"""Adapters that plug empathos's MAPO core into other training frameworks (optional extras).

Nothing outside this package imports them; each subpackage imports its framework on import.
"""
