"""Frame capture: the compiled function and its cache of entries (compiled.py), the bytecode interpreter
(interpreter/), the Tracer and the values it meets (tracer.py, values.py, paths.py), guards (guards.py,
guard_check.py), outputs and runners (outputs.py, runners.py), graph breaks and resume functions
(breaks.py, resume.py)."""
