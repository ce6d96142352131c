"""torchrun, saying when it is ready to wait for the rendezvous. The CLI starts it as

    python -m distbench.launch.agent RUN/logs/ws2-torchrun.ready --nnodes=2 ... -m distbench.worker

It runs in torchrun's own process, never in the CLI's (it imports torch). Importing torch takes
seconds, minutes from a busy shared filesystem; the file it touches once that is done tells the
CLI's watchdog (launch/torchrun.py) that the rendezvous wait starts now, so --timeout bounds the
wait for the other nodes and not the import. The rest is torchrun's `main`, unchanged.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    ready, torchrun_args = Path(args[0]), args[1:]
    from torch.distributed.run import main as torchrun

    ready.write_text("")
    torchrun(torchrun_args)


if __name__ == "__main__":
    main()
