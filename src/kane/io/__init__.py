"""Model files and results: safe expression parsing (and, later, TOML model files, URDF import, HDF5)."""

from kane.io.expressions import FUNCTION_NAMES, ExpressionError, parse_expression, parse_number

__all__ = ["ExpressionError", "FUNCTION_NAMES", "parse_expression", "parse_number"]
