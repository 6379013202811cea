"""dyn under torch.distributed: DistributedDataParallel around compiled code (ddp.py); docs/distributed.md."""
