"""Errors the core raises for bad input; the CLI turns them into one line and exit status 2."""

from __future__ import annotations


class InputError(Exception):
    """Bad user input (a file, a snapshot, an argument): the message names the file and the problem."""

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(f"{source}: {problem}")
        self.source = source
        self.problem = problem


class NetworkError(InputError):
    """The hub (or another server) could not be reached, timed out or refused for now: not bad input.
    The CLI exits with its own status (3) so that scripts can retry it."""
