"""The SPM context lifecycle attached to the QueueController core (issue 5).

Same definition style as the core (`spec.programs`): thread programs of steps written against a
`Backend`, read by the prover as Z3 terms and by the checker/recorder as concrete values.
"""
