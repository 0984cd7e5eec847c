"""The counterfactual assessment's own tests."""
