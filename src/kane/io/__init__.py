"""Model files and results: safe expression parsing, TOML model files (and, later, URDF import, HDF5)."""

from kane.io.expressions import FUNCTION_NAMES, ExpressionError, parse_expression, parse_number
from kane.io.model_file import LoadedModel, ModelFileError, SimulationSettings, load_model, parse_model

__all__ = ["ExpressionError", "FUNCTION_NAMES", "parse_expression", "parse_number",
           "LoadedModel", "ModelFileError", "SimulationSettings", "load_model", "parse_model"]
