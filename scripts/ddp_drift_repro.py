"""DDP hands out silently wrong gradients after a late channels_last conversion (2 CPU processes, gloo).

Run: python scripts/ddp_drift_repro.py   (torch only; about 10 s)

DDP builds its buckets when it wraps the model, with each bucket view taking its parameter's
strides at that moment (NCHW here). model.to(channels_last) afterwards restrides the parameters.
The reducer copies each gradient into its build-time view (warning "Grad strides do not match
bucket view strides ... This is not an error"), all-reduces, then rebuilds the views with the
parameters' *current* strides (populate_bucket_views_out) and copies the bucket back through
them (copy_bucket_to_grad): the right numbers land in the wrong places. Expected output
(torch 2.x; the numbers vary, the verdicts do not):

    0.weight (8, 3, 3, 3): relative error 1.1e+00 WRONG
    1.weight (4, 8, 1, 1): relative error 1.0e-07 right
    every rank holds the same gradients: True

The 1x1 weight is right: its channels_last strides differ only on size-1 dims, so its bytes
are in the same order either way.
"""
import os
import socket
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def rank_main(rank: int, world: int, port: int) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)  # the same weights on every rank
    model = nn.Sequential(nn.Conv2d(3, 8, 3, bias=False), nn.Conv2d(8, 4, 1, bias=False))
    ddp = DDP(model)
    ddp.to(memory_format=torch.channels_last)  # the late conversion: after DDP built its buckets
    x = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(rank))
    reference = nn.Sequential(nn.Conv2d(3, 8, 3, bias=False), nn.Conv2d(8, 4, 1, bias=False))
    reference.load_state_dict(model.state_dict())
    reference(x).square().mean().backward()  # this rank's own gradient, then averaged by hand
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the stride warning says "This is not an error"
        ddp(x.to(memory_format=torch.channels_last)).square().mean().backward()
    for (name, p), q in zip(model.named_parameters(), reference.parameters(), strict=True):
        expected = q.grad.clone()
        dist.all_reduce(expected)
        expected /= world
        error = float((p.grad - expected).norm() / expected.norm())
        if rank == 0:
            print(f"{name} {tuple(p.shape)}: relative error {error:.1e} {'WRONG' if error > 1e-4 else 'right'}")
    flat = torch.cat([p.grad.flatten() for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    if rank == 0:
        print("every rank holds the same gradients:", all(torch.equal(g, flat) for g in gathered), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free_port = s.getsockname()[1]
    mp.spawn(rank_main, args=(2, free_port), nprocs=2)
