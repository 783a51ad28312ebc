"""Admin: reconciles the per-connector AWS state (lifecycle rules, job role policy, published configs)."""
