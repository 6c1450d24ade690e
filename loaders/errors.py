"""The one error type loaders raise for bad input, and the one way user text reaches a terminal."""


def printable(text):
    """`text` safe to print on one line: control characters (terminal escape codes, newlines, NUL),
    bidi overrides and other invisible characters are shown as Python escapes (\\x1b, \\u202e)."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


class LoadError(Exception):
    """Bad input: says which file, line and sentence, and what is wrong.

    The attributes keep the input as given; str() is the one-line message, with any text from the
    input (file names, sent_ids, quoted lines) made printable.
    """

    def __init__(self, path, message, line=None, sent_id=None):
        self.path = str(path)
        self.line = line
        self.sent_id = sent_id
        self.message = message
        where = self.path if line is None else f"{self.path}:{line}"
        if sent_id is not None:
            where += f" (sentence {sent_id})"
        super().__init__(printable(f"{where}: {message}"))

    def with_note(self, note):
        """The same error with `note` added to its message (e.g. how the file's format was chosen)."""
        return LoadError(self.path, f"{self.message} {note}", self.line, self.sent_id)
