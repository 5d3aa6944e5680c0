"""One error type for everything that comes from outside (URL, CLI, YAML, widgets, uploads)."""


class ScenarioError(ValueError):
    """A bad input: ``key`` names the field, the message says what is accepted."""

    def __init__(self, key: str, message: str):
        self.key = key
        self.message = message
        super().__init__(f"{key}: {message}" if key else message)
