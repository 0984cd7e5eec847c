"""The identity assessment (first-person fairness): variants with names, outcomes read from the
answers, metrics per comparison (stages), the judge model and its check (judge), outcome-reading
accuracy against labelled answers (accuracy). Its outcome metrics are shared (tasks/metrics/identity.py):
the power plan and early stopping measure gaps in them."""
