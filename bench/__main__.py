"""`python -m distbench` is the `distbench` command."""

from distbench.cli import main

main()
