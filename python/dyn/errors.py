class Unsupported(Exception):
    """Raised when capture meets code it cannot put in a graph (a graph break).

    With fullgraph=False the frame then runs eagerly; with fullgraph=True this propagates to the
    caller. `reason` is the cause, `filename`/`lineno` the user's source line."""

    def __init__(self, reason, filename=None, lineno=None):
        self.reason = reason
        self.filename = filename
        self.lineno = lineno
        super().__init__(self._text())

    def _text(self):
        if self.filename:
            return f"{self.reason} ({self.filename}:{self.lineno})"
        return self.reason

    def locate(self, filename, lineno):
        if self.filename is None:
            self.filename, self.lineno = filename, lineno
            self.args = (self._text(),)
        return self
