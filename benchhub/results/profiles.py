"""What a CPU profile (folded stacks, `frame;frame;... count`, the root first) can tell: the
share of its samples whose innermost frame has no symbol.

perf names a frame it cannot resolve "[unknown]", and the agent names it by its object file
when perf knows that ("[postgres]", "[libc.so.6]": benchhub_runner.evidence.profile). A server
built without symbols (a stripped binary, a package without its debug symbols) puts most of its
samples in such frames, and its flame graph then says nothing about where the time went.
"""

from __future__ import annotations

# Above this share of the samples in frames without a symbol, the page says the profile cannot
# be read and what to install: half the samples unnamed hides any difference worth finding,
# while a few unnamed frames (JIT code, a library without symbols) are normal.
UNSYMBOLIZED_LIMIT = 0.5


def _unsymbolized(frame: str) -> bool:
    # The kernel's frames are named by kallsyms, not by the server's build: they say nothing of
    # whether the server has symbols.
    return frame.startswith("[") and frame.endswith("]") and "kernel" not in frame


def unsymbolized_share(folded: str) -> float | None:
    """The share (0..1) of the profile's samples whose innermost frame has no symbol; None for
    a profile without samples."""
    total = unnamed = 0
    for line in folded.splitlines():
        frames, _, number = line.rpartition(" ")
        if not frames or not number.isdigit():
            continue
        total += int(number)
        if _unsymbolized(frames.rsplit(";", 1)[-1]):
            unnamed += int(number)
    return unnamed / total if total else None


def lacks_symbols(folded: str) -> bool:
    """Whether more than UNSYMBOLIZED_LIMIT of the profile's samples have no symbol."""
    share = unsymbolized_share(folded)
    return share is not None and share > UNSYMBOLIZED_LIMIT
