"""The report's sections, one module per workload: each returns its Sections (render.Section) of
display tables and PNG figures; collectives.py also holds the helpers the others share."""
