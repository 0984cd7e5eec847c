"""One folder per assessment: its own stages and their Prefect tasks (``stages``), its own metric
families (``*metrics``, registered with the metric library) and inputs. Shared machinery (the
pipeline, statistics, the metric registry, the shared families) lives outside this folder."""
