"""What the stage tasks run on: Prefect cache policies, local or Dask execution, the run's record in
DuckDB, memory handed back between stages, the outage rule, the Prefect API client and its watchdog."""
