"""Errors that users see as one line: the input it concerns and the reason."""


class InputError(Exception):
    """A problem with one input (file, page range, image); reported without a traceback."""

    def __init__(self, source: str, reason: str):
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


class MissingExtraError(RuntimeError):
    """An optional backend is not installed; says which extra brings it."""

    def __init__(self, what: str, extra: str):
        super().__init__(f"{what} is not installed: pip install 'minuscule[{extra}]'")
