"""The assets our ``repos/`` modules declare: one test file per repository."""
