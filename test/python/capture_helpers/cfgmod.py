"""A user module whose attributes compiled code reads (test_capture_soundness)."""
SCALE = 2.0
