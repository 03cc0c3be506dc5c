"""Errors the core raises for bad input; the CLI turns them into one line and exit status 2."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rigcheck.core.said import Said


class InputError(Exception):
    """Bad user input (a file, a snapshot, an argument): the message names the file and the problem."""

    def __init__(self, source: str, problem: str | Said) -> None:
        # a problem as said (core/said.py) is made into words here, when it is raised
        problem = str(problem)
        super().__init__(f"{source}: {problem}")
        self.source = source
        self.problem = problem


class NetworkError(InputError):
    """The hub (or another server) could not be reached, timed out or refused for now: not bad input.
    The CLI exits with its own status (3) so that scripts can retry it."""
