"""The straight-line Program IR and its backends."""

from .numpy_backend import CompiledFunction, compile_program
from .program import OpCount, Program, ProgramBuilder

__all__ = ["Program", "ProgramBuilder", "OpCount", "compile_program", "CompiledFunction"]
