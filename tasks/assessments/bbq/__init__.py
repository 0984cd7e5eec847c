"""The BBQ assessment (Parrish et al. 2022): its stages and Prefect tasks (stages), its metric family (metrics)."""
