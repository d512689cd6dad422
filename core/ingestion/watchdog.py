"""The portable memory cap of the parse worker: a thread that samples the worker's resident memory and kills it
over the cap.

``RLIMIT_AS`` (POSIX only, set inside the worker) makes a runaway allocation fail inside the parser; this watchdog
works everywhere and is the cap where there is no ``RLIMIT_AS`` (Windows) or where it is not enforced (macOS).
Resident memory is read from ``/proc`` (Linux), ``GetProcessMemoryInfo`` (Windows) or ``proc_pid_rusage``
(macOS), through ctypes: no dependency. Where none answers, :func:`rss_bytes` returns None and the watchdog says
once, in the log, that the worker runs without a memory cap.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)
_warned = False


def _rss_proc(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


class _ProcessMemoryCounters(ctypes.Structure):
    _fields_ = [("cb", ctypes.c_ulong), ("PageFaultCount", ctypes.c_ulong),
                ("PeakWorkingSetSize", ctypes.c_size_t), ("WorkingSetSize", ctypes.c_size_t),
                ("QuotaPeakPagedPoolUsage", ctypes.c_size_t), ("QuotaPagedPoolUsage", ctypes.c_size_t),
                ("QuotaPeakNonPagedPoolUsage", ctypes.c_size_t), ("QuotaNonPagedPoolUsage", ctypes.c_size_t),
                ("PagefileUsage", ctypes.c_size_t), ("PeakPagefileUsage", ctypes.c_size_t)]


def _rss_windows(pid: int) -> int | None:
    try:
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return None
        try:
            counters = _ProcessMemoryCounters()
            counters.cb = ctypes.sizeof(counters)
            if not kernel32.K32GetProcessMemoryInfo(handle, ctypes.byref(counters), counters.cb):
                return None
            return int(counters.WorkingSetSize)
        finally:
            kernel32.CloseHandle(handle)
    except (AttributeError, OSError):
        return None


class _RusageInfoV2(ctypes.Structure):
    _fields_ = [("ri_uuid", ctypes.c_uint8 * 16)] + [(name, ctypes.c_uint64) for name in (
        "ri_user_time", "ri_system_time", "ri_pkg_idle_wkups", "ri_interrupt_wkups", "ri_pageins",
        "ri_wired_size", "ri_resident_size", "ri_phys_footprint", "ri_proc_start_abstime", "ri_proc_exit_abstime",
        "ri_child_user_time", "ri_child_system_time", "ri_child_pkg_idle_wkups", "ri_child_interrupt_wkups",
        "ri_child_pageins", "ri_child_elapsed_abstime", "ri_diskio_bytesread", "ri_diskio_byteswritten")]


def _rss_macos(pid: int) -> int | None:
    try:
        libc = ctypes.CDLL("/usr/lib/libSystem.dylib")
        info = _RusageInfoV2()
        if libc.proc_pid_rusage(pid, 2, ctypes.byref(info)) != 0:  # RUSAGE_INFO_V2
            return None
        return int(info.ri_resident_size)
    except (AttributeError, OSError):
        return None


def rss_bytes(pid: int) -> int | None:
    """Resident memory of process ``pid`` now, or None when this platform (or that process) does not say."""
    if sys.platform == "win32":
        return _rss_windows(pid)
    if sys.platform == "darwin":
        return _rss_macos(pid)
    return _rss_proc(pid)


class MemoryWatchdog:
    """``with MemoryWatchdog(pid, cap, kill):`` samples the process's resident memory every ``interval`` seconds
    on a thread of its own; over ``cap_bytes`` it calls ``kill()`` once and sets ``tripped``. ``peak_bytes`` is
    the largest sample."""

    def __init__(self, pid: int, cap_bytes: int, kill: Callable[[], None], interval: float = 0.1,
                 read: Callable[[int], int | None] = rss_bytes) -> None:
        self.pid, self.cap_bytes, self.kill, self.interval, self.read = pid, cap_bytes, kill, interval, read
        self.peak_bytes = 0
        self.tripped = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="shelfwise-memory-watchdog", daemon=True)

    def _run(self) -> None:
        global _warned
        first = True
        while True:
            rss = self.read(self.pid)
            if rss is None:
                if first and not _warned and not self._stop.is_set():
                    _warned = True
                    log.warning("cannot read the parse worker's memory on this platform: it has no memory cap "
                                "beyond the address-space limit (if any)")
            else:
                self.peak_bytes = max(self.peak_bytes, rss)
                if rss > self.cap_bytes:
                    self.tripped = True
                    self.kill()
                    return
            first = False
            if self._stop.wait(self.interval):
                return

    def __enter__(self) -> MemoryWatchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
