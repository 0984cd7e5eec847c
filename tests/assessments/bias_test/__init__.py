"""The bias_test assessment's own tests."""
