"""Renderings of spmcheck's typed records (spec.results.ProofResult, spec.parametric ParamResult,
checker.results.FileResult) for people and tools: summary line, text, JSON envelope, SARIF,
JUnit, GitHub annotations, and the HTML/Markdown report. Nothing here decides a verdict."""
