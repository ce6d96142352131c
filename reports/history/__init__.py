"""`distbench history`: many nightly runs as time series (load.py, cache.py), their change points
(detect.py) and verdicts (verdict.py), written as a page (render.py,
figures.py); build.py runs it."""
