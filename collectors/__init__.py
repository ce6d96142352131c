"""Result rows, the environment fingerprint, and the sinks that write them to a run directory."""
