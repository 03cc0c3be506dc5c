"""A large recording read in a process of its own, so the GUI thread never waits for the interpreter.

:func:`rigcheck.core.replay.read_recording` is a Python loop over every line: on a pool thread it holds
the interpreter the GUI thread needs for each of its calls into Qt, and a gigabyte (16 s of reading)
made single repaints wait up to 1.4 s for it (``benchmarks/gui_handlers.py``: 42 ms of CPU). A file of
at least :data:`PROCESS_MIN_BYTES` is read in a ``spawn``-started process instead: its progress comes
back through a pipe, Cancel ends the process, and the :class:`Recording` (plain arrays, strings and
numbers, made by our own child from the file, never unpickled from disk) is the only thing sent back.
A smaller file is read on the calling thread, as before: starting a Python process costs more than that.

Qt-free: the child imports this module alone (and the core reader), not the GUI.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rigcheck.core.errors import InputError
from rigcheck.core.replay import MAX_CELLS, Recording, read_recording
from rigcheck.core.steps import Steps

#: a recording at least this large is read in a process of its own
PROCESS_MIN_BYTES = 32 * 1024 * 1024
#: seconds between two progress messages from the child, and between two checks of Cancel
POLL_S = 0.1


def wants_a_process(path: Path) -> bool:
    """Whether ``path`` is large enough to be read in a process of its own (a missing file is not: the
    reader says what is wrong with it)."""
    try:
        return Path(path).stat().st_size >= PROCESS_MIN_BYTES
    except OSError:
        return False


def read_in_process(
    path: Path, steps: Steps, *, max_cells: int = MAX_CELLS, target: Callable[..., None] | None = None
) -> Recording:
    """:func:`read_recording` of ``path`` in a ``spawn``-started process; ``steps`` gets the fraction read
    and, when cancelled, ends the process. Raises what :func:`read_recording` raises (an
    :class:`InputError` for a bad file). A process that cannot be started, or ends without an answer
    (a frozen app that cannot start a copy of itself, a child killed), leaves the reading to this
    thread, as a small file's is: slower for the GUI, but the recording opens. ``target``: the child's
    function (tests)."""
    import multiprocessing  # only when a large file is opened: not on the app's start-up path

    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(
        target=target or _child, args=(str(path), max_cells, send), daemon=True, name="rigcheck-replay"
    )
    try:
        child.start()
    except (OSError, RuntimeError):
        receive.close()
        send.close()
        return read_recording(path, max_cells=max_cells, steps=steps)
    send.close()  # the child's end: when the child dies, recv() ends instead of waiting for ever
    try:
        answer = _answer(receive, child, steps)
    finally:
        receive.close()
        if child.is_alive():
            child.kill()  # cancelled, or the GUI gave up: the child's memory goes with it
        child.join(5)
    if answer is None:
        return read_recording(path, max_cells=max_cells, steps=steps)
    return answer


def _answer(receive: Any, child: Any, steps: Steps) -> Recording | None:
    """The child's recording (its error raised here), or None when it ended without answering."""
    fraction = 0.0
    while True:
        steps(fraction, 1.0)  # Cancelled when the user cancelled
        if not receive.poll(POLL_S):
            if not child.is_alive() and not receive.poll(0):
                return None
            continue
        try:
            kind, value = receive.recv()
        except EOFError:
            return None
        if kind == "progress":
            fraction = float(value)
        elif kind == "done":
            return value  # type: ignore[no-any-return]
        elif kind == "input":
            raise InputError(*value)
        else:
            raise RuntimeError(str(value))


def _child(path: str, max_cells: int, send: Any) -> None:
    """In the child: read, sending the fraction read a few times a second, then the recording."""
    steps = Steps(lambda fraction: send.send(("progress", fraction)), every_s=POLL_S)
    try:
        recording = read_recording(path, max_cells=max_cells, steps=steps)
    except InputError as exc:
        send.send(("input", (exc.source, exc.problem)))
    except Exception as exc:  # noqa: BLE001 - sent to the GUI, which reports it
        send.send(("failed", f"{type(exc).__name__}: {exc}"))
    else:
        send.send(("done", recording))
    finally:
        send.close()


__all__ = ["PROCESS_MIN_BYTES", "read_in_process", "wants_a_process"]
