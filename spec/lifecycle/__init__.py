"""The SPM context lifecycle attached to the QueueController core (issue 5).

Written once in the protocol language like the core (`spec.programs`): `definition.py` declares
its sorts, state and actions; `spec.lang.finite` compiles them for the prover (Z3 terms) and the
checker/recorder (concrete values).
"""
