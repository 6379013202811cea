"""The integer and boolean OpInfo samples dyn does not compile natively yet (test_opinfo.py runs each
OpInfo's function variant with int64, uint8 and bool samples where the OpInfo supports them). Strict like
KNOWN_FAILURES: each must fail with the start of today's message; a fix that makes one pass fails the test
until its entry is removed. Empty since 2026-11-27 (142 at first: docs/ops.md); a new OpInfo or dtype that
dyn does not compile natively fails test_opinfo until it is fixed or listed here."""

# (OpInfo name, variant, dtype) -> the start of today's first failure (CPU and CUDA)
INTEGER_GAPS = {}
