"""Persistence: the DuckDB store and the content fingerprints that key Prefect's task caches."""
