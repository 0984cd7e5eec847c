"""The identity assessment (first-person fairness): its config (config), what it asks (plan),
variants with names, outcomes read from the answers and metrics per comparison (stages), its outcome
metrics (metrics: each declares the outcome kind it reads, so the power plan and early stopping find
the gaps through the metric registry), the judge model and its check (judge), outcome-reading
accuracy against labelled answers (accuracy)."""
