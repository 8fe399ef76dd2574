"""The straight-line Program IR and its backends."""

from kane.lazy import lazy_exports

_EXPORTS = {  # each name imports its module on first use (kane.lazy)
    **dict.fromkeys(("CompiledFunction", "compile_program"), ".numpy_backend"),
    **dict.fromkeys(("OpCount", "Program", "ProgramBuilder"), ".program"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["Program", "ProgramBuilder", "OpCount", "compile_program", "CompiledFunction"]
