"""The exceptions of relaxc (and relaxc_runtime). Each carries the message the relaxc CLI
prints after "error: "."""

__all__ = ["Error", "CompileError", "InputError", "ArtifactError"]


class Error(RuntimeError):
    """Any failure reported by relaxc."""


class CompileError(Error):
    """The model could not be compiled: a missing or malformed model, an unsupported op (the
    message lists each with its first node), a bad option, target or bound."""


class InputError(Error):
    """Module.run refused its feeds or failed on them: a missing or unknown input, a wrong
    dtype, rank or dim (the message names the input and the dim), a value outside a --bound,
    an out-of-range index found while running."""


class ArtifactError(Error):
    """An artifact could not be loaded: missing, truncated, corrupt, built for another
    machine, or a device that is not there."""
