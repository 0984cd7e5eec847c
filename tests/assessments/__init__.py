"""Each assessment's own tests, one folder per assessment (tests/assessments/NAME/)."""
