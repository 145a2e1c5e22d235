"""The studies of results/: their manifests, the one runner of dlsim they share, and their regeneration.

scripts/regenerate.py is the command; results/README.md says what a study is and what its manifest holds.
"""
