"""The stereotype assessment: its stages and Prefect tasks (stages), its metric families (metrics: word
lists and co-occurrence; classifier_metrics: toxicity and stereotype classifiers, HONEST)."""
