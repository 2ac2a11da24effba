"""Suite kernel modules; each defines a module-level ``CONTRACT`` (see harness.suite)."""
