"""The registry of primitives: torch name -> implementation (imports torch; their facts, which do
not, are in facts.py)."""

from __future__ import annotations

from distbench.primitives.all_gather import AllGather
from distbench.primitives.all_reduce import AllReduce
from distbench.primitives.all_to_all import AllToAll
from distbench.primitives.all_to_allv import AllToAllV
from distbench.primitives.base import Primitive
from distbench.primitives.broadcast import Broadcast
from distbench.primitives.gather import Gather
from distbench.primitives.reduce import Reduce
from distbench.primitives.reduce_scatter import ReduceScatter
from distbench.primitives.send_recv import SendRecv

PRIMITIVES: dict[str, Primitive] = {
    "all_reduce": AllReduce(),
    "broadcast": Broadcast(),
    "reduce": Reduce(),
    "all_gather": AllGather(),
    "reduce_scatter": ReduceScatter(),
    "all_to_all": AllToAll(),
    "send_recv": SendRecv(),
    "all_to_allv": AllToAllV(),
    "gather": Gather(),
}
