"""`distbench overlap`: a collective while a matmul computes, next to each alone."""
