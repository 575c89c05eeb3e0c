"""Fault scenarios as data (docs/faults.md): the failure space of
`sparkdedalus faults` and what a counterexample is. No Spark here."""
