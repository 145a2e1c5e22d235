# For tests/figures/figures_test.py: put first on PYTHONPATH, this stands in for a Python without matplotlib.
raise ImportError("No module named 'matplotlib' (the test's stand-in)")
