"""The one error type loaders raise for bad input."""


class LoadError(Exception):
    """Bad input: says which file, line and sentence, and what is wrong."""

    def __init__(self, path, message, line=None, sent_id=None):
        self.path = str(path)
        self.line = line
        self.sent_id = sent_id
        self.message = message
        where = self.path if line is None else f"{self.path}:{line}"
        if sent_id is not None:
            where += f" (sentence {sent_id})"
        super().__init__(f"{where}: {message}")
