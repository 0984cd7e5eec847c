"""Plain stage functions per assessment, over DataFrames: what the flows wrap in Prefect tasks."""
