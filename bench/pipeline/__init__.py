"""`distbench pipeline`: a synthetic model split into one stage per rank, library versus by hand."""
