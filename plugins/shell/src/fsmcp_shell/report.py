"""What a finished command looks like to the model: ``exit_code`` / ``stdout`` / ``stderr``
text, held to the output budget, and the same facts as data."""

from __future__ import annotations

from typing import Any

from fsmcp import Text, ToolResult

from .changes import Viewed, changes_data, changes_text
from .process import Captured, Finished

MAX_OUTPUT_BYTES = 512 * 1024
_NARROW = "Narrow the command (head, tail, grep -m N, sed -n '100,200p') to see another part."
_HEADROOM = 600
"""Characters kept for the status lines and the notices."""


def report(viewed: Viewed, *, command: str, args: list[str], cwd: str, timeout: float, grace: float, budget: int) -> ToolResult:
    """``viewed``: the program's end (:attr:`Viewed.done`) and what became of its changes, said
    after the status lines and before the streams, which share what budget that leaves."""
    done = viewed.done
    status = [_exit_line(done)]
    if done.timed_out:
        status.append(
            f"timed_out: true (still running after {timeout:g} s: its process group got SIGTERM, "
            f"then SIGKILL {grace:g} s later if needed; the output below is what it wrote until then)"
        )
    if (changes := changes_text(viewed)) is not None:
        status.append(changes)
    out_text, err_text = done.stdout.text(), done.stderr.text()
    out_room, err_room = _share(budget - _HEADROOM - len(changes or ""), len(out_text), len(err_text))
    stdout, out_shown, out_cut = _stream("stdout", done.stdout, out_text, out_room)
    stderr, err_shown, err_cut = _stream("stderr", done.stderr, err_text, err_room)
    text = "\n".join(status) + "\nstdout:\n" + out_shown + "stderr:\n" + err_shown
    data: dict[str, Any] = {
        "command": command,
        "args": args,
        "cwd": cwd,
        "exitCode": done.exit_code,
        "signal": done.signal,
        "timedOut": done.timed_out,
        "stdout": stdout,
        "stderr": stderr,
        "stdoutTruncated": out_cut,
        "stderrTruncated": err_cut,
        "stdoutBytes": done.stdout.total,
        "stderrBytes": done.stderr.total,
        **changes_data(viewed),
    }
    return ToolResult([Text(text.rstrip("\n"))], data)


def _exit_line(done: Finished) -> str:
    if done.exit_code is None:
        return f"exit_code: none (killed by {done.signal})"
    if done.exit_code == 0:
        return "exit_code: 0"
    return f"exit_code: {done.exit_code} (non-zero: the command ran and reported a failure; this is its result, not a server error)"


def _share(room: int, out: int, err: int) -> tuple[int, int]:
    """Split ``room`` characters between the streams: each gets half, and what the other leaves."""
    half = room // 2
    if out <= half:
        return out, room - out
    if err <= half:
        return room - err, err
    return half, room - half


def _stream(name: str, captured: Captured, text: str, room: int) -> tuple[str, str, bool]:
    """The text kept, the same with notices saying what is missing, and whether anything is."""
    notes = []
    if captured.truncated:
        notes.append(
            f"[{name} truncated: it wrote {captured.total:,} bytes, the first {len(captured.kept):,} are kept "
            f"(maxOutputBytes, at most {MAX_OUTPUT_BYTES:,}). {_NARROW}]"
        )
    if len(text) > room:
        end = text.rfind("\n", 0, room) + 1 or room
        notes.append(f"[{name} cut to its first {end:,} of {len(text):,} characters to fit the output budget. {_NARROW}]")
        text = text[:end]
    shown = text if not text or text.endswith("\n") else text + "\n"
    return text, shown + "".join(note + "\n" for note in notes), bool(notes)
