"""User-facing errors: one line naming the model element and the fix.

Anything raised as `HlsgenError` is printed by the CLI as a single line and exits with
code 2. Any other exception is a bug in hlsgen and keeps its traceback.
"""


class HlsgenError(Exception):
    """A problem with the user's input (model, options, files), not with hlsgen."""

    exit_code = 2

    def __init__(self, message: str):
        # Keep it one line whatever the caller passed in.
        super().__init__(" ".join(str(message).split()))
