"""Sluice benchmarks: what security costs, next to the same work unsecured (``python -m bench``)."""
