"""The counterfactual assessment."""
