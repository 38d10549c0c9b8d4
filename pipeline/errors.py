"""The one error type a stage raises for bad input.

``python -m pipeline`` turns it into a single line on stderr and exit status 2, so a
user sees which file, key or value is at fault instead of a traceback.
"""


class PipelineError(Exception):
    """Bad input: a config key, a file, a checksum. The message names the culprit."""


def first_line(error: BaseException) -> str:
    """What a library's exception says, in one line: its first line, or its type where it says
    nothing (an empty file's EOFError)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
