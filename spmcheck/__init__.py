"""`python -m spmcheck`: the same entry point as the `spmcheck` script. The code lives in the
top-level `spec` (protocol, prover) and `checker` (trace checker, CLI) packages."""
