"""CuIR Python package."""
