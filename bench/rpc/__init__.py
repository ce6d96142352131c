"""`distbench rpc`: torch.distributed.rpc over TensorPipe (remote calls and references)."""
