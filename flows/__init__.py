"""equilens flows: one Prefect flow per assessment, their cached task wrappers, the run bookkeeping and the CLI."""
