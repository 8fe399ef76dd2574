"""Model files: safe expression parsing, TOML model files and URDF import."""

from kane.io.expressions import FUNCTION_NAMES, ExpressionError, parse_expression, parse_number
from kane.io.model_file import LoadedModel, ModelFileError, SimulationSettings, load_model, parse_model
from kane.io.urdf import UrdfModel, load_urdf, parse_urdf

__all__ = ["ExpressionError", "FUNCTION_NAMES", "parse_expression", "parse_number",
           "LoadedModel", "ModelFileError", "SimulationSettings", "load_model", "parse_model",
           "UrdfModel", "load_urdf", "parse_urdf"]
