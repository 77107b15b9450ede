"""The one error the command reports to the user (exit 2): bad rates, names, executors."""


class ResilienceError(Exception):
    pass
