"""How a run starts and what happens around its flow: the CLI's launch (preflight, plan, power,
dispatch to a local or Prefect-served flow), interrupts, quiet logs, looks for early stopping, and the
Prefect artifacts a run leaves."""
