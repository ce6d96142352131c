"""The report page: build.py assembles report.md and report.html from the sections (sections/,
their figures in figures/) over the analysis of report/. Above both, so that neither imports it."""
