"""The single-writer lock of a run directory.

`RUN/LOCK` holds the writer's pid, host and start time (JSON). The lock itself is
an exclusive `flock` on that file, held for as long as the writer's file
descriptor is open: the kernel drops it when the process exits or is killed, so
a lock left by a dead writer is stale by construction and the next writer takes
it over without asking. The file is never deleted (deleting a flocked file races
with a concurrent opener); its content always names the last writer.

On a file system without `flock` (some network mounts) the lock falls back to
creating the file exclusively; a lock file whose pid is dead on this host is then
stale and removed. A lock taken on another host cannot be checked from here and
is refused.

>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> first = WriterLock(d); first.acquire()
>>> try:
...     WriterLock(d).acquire()
... except StoreLockedError as exc:
...     print(type(exc).__name__)
StoreLockedError
>>> first.release(); second = WriterLock(d); second.acquire(); second.release()
"""

from __future__ import annotations

import errno
import json
import os
import socket
import time

from sparkdedalus.store.errors import StoreError, StoreLockedError

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Linux/macOS
    fcntl = None

LOCK_FILE = "LOCK"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else
        return True
    return True


def describe_holder(info: dict) -> str:
    return (f"pid {info.get('pid', '?')} on host {info.get('host', '?')}, "
            f"since {info.get('since', '?')}")


class WriterLock:
    """An exclusive writer lock on `directory` (see the module doc)."""

    def __init__(self, directory: str):
        self.directory = directory
        self.path = os.path.join(directory, LOCK_FILE)
        self._fd: int | None = None
        self._exclusive_file = False  # True on the no-flock fallback

    @property
    def held(self) -> bool:
        return self._fd is not None or self._exclusive_file

    def info(self) -> dict:
        return {"pid": os.getpid(), "host": socket.gethostname(),
                "since": time.strftime("%Y-%m-%dT%H:%M:%S%z")}

    def acquire(self) -> None:
        if self.held:
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if fcntl is None:
                raise OSError(errno.ENOLCK, "no fcntl")
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_info(self.path)
            os.close(fd)
            raise StoreLockedError(self._refusal(holder)) from None
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                self._acquire_exclusive_file()
                return
            raise StoreError(f"cannot lock run directory {self.directory}: {exc.strerror or exc}") from None
        self._fd = fd
        data = json.dumps(self.info()).encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
        os.fsync(fd)

    def _refusal(self, holder: dict) -> str:
        return (f"run directory {self.directory} is being written by another process "
                f"({describe_holder(holder)}); a run directory has one writer at a time")

    def _acquire_exclusive_file(self) -> None:
        """The fallback without flock: create LOCK exclusively (the flock attempt
        may have created an empty one: an empty or unreadable file is stale)."""
        for _ in range(2):
            holder = _read_info(self.path)
            if os.path.exists(self.path):
                stale = (not holder or (holder.get("host") == socket.gethostname()
                                        and not _pid_alive(int(holder.get("pid", -1)))))
                if not stale:
                    raise StoreLockedError(self._refusal(holder))
                try:
                    os.unlink(self.path)
                except FileNotFoundError:
                    pass
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                continue
            with os.fdopen(fd, "w") as handle:
                handle.write(json.dumps(self.info()))
                handle.flush()
                os.fsync(handle.fileno())
            self._exclusive_file = True
            return
        raise StoreLockedError(self._refusal(_read_info(self.path)))

    def release(self) -> None:
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None
        elif self._exclusive_file:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            self._exclusive_file = False


def probe(directory: str) -> None:
    """Raise `StoreLockedError` when a live writer holds `directory` (checked
    early, before a session starts; the writer takes the lock for real later)."""
    if os.path.isdir(directory):
        lock = WriterLock(directory)
        lock.acquire()
        lock.release()


def _read_info(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.loads(handle.read() or "{}")
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}
