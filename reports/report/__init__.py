"""`distbench report`: figures and tables from run directories (page/build.py assembles the
page from sections/, whose figures are in figures/), and its verdicts, judged by compare's own
core (verdicts.py, sides.py)."""
