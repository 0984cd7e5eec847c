"""The classification assessment: its stages and Prefect tasks (stages), its metric family (metrics)."""
