"""Code several functions run, copied into each one's code folder (`infra.packaging.FUNCTIONS`)."""
