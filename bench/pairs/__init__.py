"""`distbench pairs`: every pair of ranks or nodes, concurrently by rounds, with outliers named."""
