"""Cold reads without touching the host: a relation's files dropped from the kernel's page
cache from inside its container, and what the block device did meanwhile (/proc/diskstats,
which containers share with the host): a run read cold if the device delivered its bytes.

Dropping with posix_fadvise(POSIX_FADV_DONTNEED) (`dd iflag=nocache count=0`) needs no
privilege, unlike /proc/sys/vm/drop_caches; it drops clean pages only, so the files are
synced first.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass

from ..errors import ReproError
from .servers import ContainerServer

SECTOR = 512  # /proc/diskstats counts 512-byte sectors whatever the device's block size


def relation_files(server: ContainerServer, relation: str) -> list[str]:
    """The files of a relation's main fork (segments of 1 GB), as absolute paths."""
    base = server.sql("SELECT current_setting('data_directory') || '/' || pg_relation_filepath(%s)",
                      (relation,))[0][0]
    out = server.run(["sh", "-c", f"ls {shlex.quote(base)} {shlex.quote(base)}.[0-9]* 2>/dev/null || true"])
    return out.split()


def evict(server: ContainerServer, files: list[str]) -> None:
    """Write the files' dirty pages out (sync), then drop all their pages from the page cache."""
    quoted = " ".join(map(shlex.quote, files))
    server.run(["sh", "-c", f"set -e; sync {quoted}; for f in {quoted}; do "
                            f"dd if=\"$f\" iflag=nocache count=0 status=none; done"])


@dataclass(frozen=True)
class DiskReads:
    """Reads completed and sectors read per whole block device, at one moment."""

    devices: dict[str, tuple[int, int]]

    def since(self, before: DiskReads) -> tuple[str, int, int] | None:
        """The device that read the most since `before`: (name, reads, bytes)."""
        deltas = [(name, reads - before.devices[name][0], (sectors - before.devices[name][1]) * SECTOR)
                  for name, (reads, sectors) in self.devices.items() if name in before.devices]
        busiest = max(deltas, key=lambda d: d[2], default=None)
        return busiest if busiest and busiest[1] > 0 else None


def parse_diskstats(text: str) -> DiskReads:
    """/proc/diskstats: whole devices only (a partition's reads are also its disk's); loop
    and ram devices left out."""
    devices: dict[str, tuple[int, int]] = {}
    rows = [line.split() for line in text.splitlines() if len(line.split()) >= 6]
    names = {row[2] for row in rows}
    for row in rows:
        name = row[2]
        if name.startswith(("loop", "ram", "zram")) or _partition_of(name, names):
            continue
        devices[name] = (int(row[3]), int(row[5]))
    return DiskReads(devices)


def _partition_of(name: str, names: set[str]) -> bool:
    """vda1 of vda, nvme0n1p1 of nvme0n1, sda2 of sda."""
    return any(name != disk and name.startswith(disk) and name[len(disk):].lstrip("p").isdigit()
               for disk in names)


def disk_reads(server: ContainerServer) -> DiskReads:
    return parse_diskstats(server.run(["cat", "/proc/diskstats"]))


def read_ahead_kb(server: ContainerServer, device: str) -> int | None:
    """The kernel's readahead limit for a block device (sysfs, read-only in containers)."""
    try:
        text = server.run(["cat", f"/sys/block/{device}/queue/read_ahead_kb"]).strip()
    except ReproError:  # no such device in this container's sysfs
        return None
    return int(text) if text.isdigit() else None
