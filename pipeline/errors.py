"""The one error type a stage raises for bad input.

``python -m pipeline`` turns it into a single line on stderr and exit status 2, so a
user sees which file, key or value is at fault instead of a traceback.
"""


class PipelineError(Exception):
    """Bad input: a config key, a file, a checksum. The message names the culprit."""
