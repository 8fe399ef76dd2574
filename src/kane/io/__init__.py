"""Model files: safe expression parsing, TOML model files, URDF and MJCF import."""

from kane.lazy import lazy_exports

_EXPORTS = {  # each name imports its module on first use (kane.lazy)
    **dict.fromkeys(("FUNCTION_NAMES", "ExpressionError", "parse_expression", "parse_number"), ".expressions"),
    **dict.fromkeys(("LoadedModel", "ModelFileError", "SimulationSettings", "load_model", "load_model_data",
                     "parse_model"),
                    ".model_file"),
    **dict.fromkeys(("UrdfModel", "load_urdf", "parse_urdf"), ".urdf"),
    **dict.fromkeys(("MjcfModel", "MjcfWarning", "load_mjcf", "parse_mjcf"), ".mjcf"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["ExpressionError", "FUNCTION_NAMES", "parse_expression", "parse_number",
           "LoadedModel", "ModelFileError", "SimulationSettings", "load_model", "load_model_data", "parse_model",
           "UrdfModel", "load_urdf", "parse_urdf", "MjcfModel", "MjcfWarning", "load_mjcf", "parse_mjcf"]
