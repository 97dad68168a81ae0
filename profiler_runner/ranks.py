"""`tracetui profile --nproc N`: N ranks of one job on this machine, each profiled with the same schedule.

The ranks are started by torch's own launcher machinery (torch.multiprocessing.start_processes, spawn), which
joins them, stops the others when one fails and hands back its traceback. Each rank has the environment torchrun
gives a rank (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT), makes its
process group from it (env://; gloo on the CPU, NCCL on CUDA with one GPU per rank) and writes
<folder>/rank-K.json, with the distributedInfo torch's profiler adds for an initialized process group.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import ProfileError, UserCodeError
from .job_checks import check_job, job_folder, machine_note
from .quiet import NOISE

LOG_TAIL = 8  # lines of a failed rank's error shown
FIRST = "first-failure"  # in the logs folder: the rank that failed first


@dataclass
class RankJob:
    """What every rank is handed (picklable: spawn sends it to each new process)."""

    args: object  # the argparse Namespace
    folder: str
    nproc: int
    port: int
    device: str
    logs: str  # a folder for each rank's stderr (rank-K.log): a rank that dies leaves its last lines there


class RankFailure(Exception):
    """A rank's own error told as a line (our error, or the user's code): raised in the rank, shown by the parent."""


def run_ranks(args, reader) -> int:
    """Start the ranks, wait for them, then print what the job shows and open the folder."""
    from torch.distributed.elastic.utils.distributed import get_free_port

    from .runner import import_torch, pick_device
    from .target import check_request

    check_request(args)  # before torch and the device: a typo costs nothing
    torch = import_torch()
    device, cpu_note = pick_device(torch, args.device)
    nproc = check_job(args, torch, device)
    folder, taken = job_folder(args, device)
    for note in (cpu_note, machine_note(torch, device, nproc)):
        if note:
            print(note, file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="tracetui-ranks-") as logs:
        job = RankJob(args, str(folder), nproc, get_free_port(), device, logs)
        code = _launch(job)
        _pass_on(Path(logs), nproc)
    if code:
        return code
    print(_written(folder, nproc, taken), file=sys.stderr)
    print("\n".join(reader.job(folder)))
    return 0 if args.no_open else reader.open(folder)


def _launch(job: RankJob) -> int:
    """Start and join the ranks; a failure is told (the rank, its exit, its last lines, what was kept)."""
    import torch.multiprocessing as mp

    logging.getLogger("torch.multiprocessing.spawn").setLevel(logging.ERROR)  # its 'Terminating process' lines
    folder = Path(job.folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProfileError(f"{folder}: cannot create the folder of the rank traces ({exc.strerror})") from None
    ctx = mp.start_processes(_rank_main, args=(job,), nprocs=job.nproc, join=False, start_method="spawn")
    before = _stop_on_term()
    try:
        _join(ctx, job, folder)
    except KeyboardInterrupt:
        _stop(ctx.processes)
        print(f"tracetui: interrupted: the {job.nproc} ranks were stopped{_kept(folder, job.nproc)}", file=sys.stderr)
        return 130
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)
    missing = [k for k in range(job.nproc) if not (folder / f"rank-{k}.json").is_file()]
    if missing:  # every rank exited 0 (a rank stopped by Ctrl-C does) without its trace
        ranks = ", ".join(str(k) for k in missing)
        raise ProfileError(f"rank {ranks} ended without writing a trace" + _kept(folder, job.nproc))
    return 0


def _join(ctx, job: RankJob, folder: Path) -> None:
    """Wait for every rank; the first that fails is told with its last lines (torch stops the others)."""
    import torch.multiprocessing as mp

    try:
        while not ctx.join():
            pass
    except mp.ProcessRaisedException as exc:
        k, msg = _first_raised(job.logs, ctx.error_files, exc.error_index, exc.msg)
        raise ProfileError(_failed(k, "raised", _raised_tail(msg)) + _kept(folder, job.nproc)) from None
    except mp.ProcessExitedException as exc:
        how = f"was killed by {exc.signal_name}" if exc.signal_name else f"exited with code {exc.exit_code}"
        tail = _log_tail(Path(job.logs) / f"rank-{exc.error_index}.log")
        raise ProfileError(_failed(exc.error_index, how, tail) + _kept(folder, job.nproc)) from None


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _stop_on_term():
    """SIGTERM stops the ranks as Ctrl-C does (a rank ignores the SIGINT torch sends it when its parent dies, where
    its shell started it in the background); the handler it replaces, None where none can be set (not the main
    thread)."""
    try:
        return signal.signal(signal.SIGTERM, _interrupt)
    except ValueError:
        return None


def _first_raised(logs: str, error_files: list[str], index: int, msg: str) -> tuple[int, str]:
    """The rank that raised first, and its traceback (torch names the first failure it sees, which may be a rank
    that raised because another one left)."""
    import pickle

    try:
        k = int((Path(logs) / FIRST).read_text())
        with open(error_files[k], "rb") as fh:
            return k, str(pickle.load(fh))  # noqa: S301 - written by our own rank (torch's spawn wrapper)
    except (OSError, ValueError, IndexError, pickle.UnpicklingError, EOFError):
        return index, msg


def _stop(processes) -> None:
    """Every rank still running: SIGTERM, then SIGKILL for one that does not go."""
    for p in processes:
        if p.is_alive():
            p.terminate()
    for p in processes:
        p.join(timeout=10)
        if p.is_alive():
            p.kill()
            p.join()


def _failed(rank: int, how: str, tail: list[str]) -> str:
    told = f"rank {rank} {how}; the other ranks were stopped"
    return told + ("".join(f"\n    {line}" for line in tail) if tail else "")


def _raised_tail(msg: str) -> list[str]:
    """The last lines of a rank's traceback; our own RankFailure is its message alone."""
    lines = [line for line in msg.strip().splitlines() if line.strip()]
    marker = f"{__name__}.RankFailure: "
    for k, line in enumerate(lines):
        if line.startswith(marker):
            return [line[len(marker) :], *lines[k + 1 :]][-LOG_TAIL * 2 :]
    return lines[-LOG_TAIL:]


def _log_tail(log: Path) -> list[str]:
    try:
        text = log.read_bytes()
    except OSError:
        return []
    lines = [b for b in text.splitlines() if b.strip() and not b.startswith(NOISE)]
    return [b.decode("utf-8", "replace") for b in lines[-LOG_TAIL:]]


def _pass_on(logs: Path, nproc: int) -> None:
    """What the ranks wrote to stderr (warnings, the user's prints), each line with its rank, torch's noise left out."""
    for k in range(nproc):
        try:
            lines = [b for b in (logs / f"rank-{k}.log").read_bytes().splitlines() if not b.startswith(NOISE)]
        except OSError:
            continue
        for line in lines:
            print(f"[rank {k}] {line.decode('utf-8', 'replace')}", file=sys.stderr)


def _kept(folder: Path, nproc: int) -> str:
    """What a stopped job left: the rank traces written (a partial job), or none (the empty folder is removed)."""
    written = sorted(p.name for p in folder.glob("rank-*.json"))
    if not written:
        try:
            folder.rmdir()
        except OSError:
            pass
        return "\n(no rank trace was written)"
    return f"\n(partial job kept in {folder}: {', '.join(written)}, {len(written)} of {nproc} ranks)"


def _written(folder: Path, nproc: int, taken: Path | None) -> str:
    note = f" ({taken.name} was taken)" if taken else ""
    return f"tracetui: wrote {folder}/rank-0.json .. rank-{nproc - 1}.json and their tables (rank-K.txt){note}"


def _rank_main(rank: int, job: RankJob) -> None:
    """One rank: torchrun's environment, the process group, the capture, its trace and table."""
    _log_to(Path(job.logs) / f"rank-{rank}.log")
    os.environ.update(_rank_env(rank, job))
    from .rank_capture import capture_rank

    try:
        capture_rank(rank, job)
    except Exception as exc:
        _claim_first(Path(job.logs), rank)
        if isinstance(exc, UserCodeError):
            raise RankFailure(exc.report()) from None
        if isinstance(exc, ProfileError):
            raise RankFailure(f"tracetui: {exc}") from None
        raise


def _claim_first(logs: Path, rank: int) -> None:
    """Say this rank failed first, unless another did (O_EXCL: one rank wins): a rank that fails because another
    left (its connection closed) fails after it, and is not the cause told."""
    try:
        fd = os.open(logs / FIRST, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return
    os.write(fd, str(rank).encode())
    os.close(fd)


def _rank_env(rank: int, job: RankJob) -> dict[str, str]:
    """The variables torchrun sets for a rank of a job on one machine (localhost only)."""
    env = {
        "RANK": str(rank),
        "LOCAL_RANK": str(rank),
        "WORLD_SIZE": str(job.nproc),
        "LOCAL_WORLD_SIZE": str(job.nproc),
        "GROUP_RANK": "0",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(job.port),
    }
    if sys.platform.startswith("linux") and "GLOO_SOCKET_IFNAME" not in os.environ:
        env["GLOO_SOCKET_IFNAME"] = "lo"  # gloo would bind the host name's interface; this job stays on loopback
    return env


def _log_to(path: Path) -> None:
    """This rank's stderr into its log (fd 2: torch's C++ lines too), so a rank that dies leaves its last lines."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 2)
    os.close(fd)
