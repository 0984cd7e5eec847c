"""The decisions assessment (discrim-eval): its decision sets (decision_sets), its stages and Prefect
tasks (stages), its metric family (metrics)."""
