"""The report's figures, seaborn on matplotlib's Agg backend: collectives.py (the shared panel
helpers and the collectives' figures), ddp.py, pairs.py, compare.py."""
