"""Dynamic shapes (docs/dynamic_shapes.md): which argument dims a capture makes symbolic (marks.py:
dyn.mark_dynamic, dynamic=True, automatic dynamic after a size-only recompile), the symbolic sizes and guards
of such a capture (symbolic.py), and the kernel that runs its graph at any size (kernel.py)."""
