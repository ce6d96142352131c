"""distbench: benchmarks for PyTorch's communication primitives on torchrun process groups."""

__version__ = "0.3.0.dev0"
