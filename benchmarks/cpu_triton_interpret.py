"""The fused-epilogue Triton kernel (issue 41) checked case by case before the H200 times it:

    PYTHONPATH=/tmp/tritonpkg TRITON_INTERPRET=1 .venv/bin/python benchmarks/cpu_triton_interpret.py --out DIR

On a CPU, under Triton's interpreter (numpy runs the kernel's own source, program by
program): ResNet-50's 1x1 stride-1 convolutions at a small batch and an image size whose row
counts M = N*H*W are not multiples of any tile (batch 1, 200 px: M = 2500, 625, 169, 49),
each with a residual, without one, and without ReLU (the shortcut's form), in float16 and
float32, channels_last as the custom op receives them, every autotune config forced in turn
(the interpreter cannot time configs, so the autotuner cannot run there); and edge cases (K and
N not multiples of the tiles, a single row, an NCHW input). Each case goes through the op's
CUDA-path function (fused_epilogue.triton_conv1x1) and is compared with float64 PyTorch; its
output's shape, dtype and strides with the op's fake's. Then the whole folded ResNet-50 (batch
2, 32 px) with the interpreted kernel as the op's CPU kernel, eager and compiled by Inductor on
the CPU (the strides Inductor hands the op), against the folded network (~40 s).

The interpreter cannot vouch for what only a GPU shows: shared memory and registers per
config, TF32 for float32 operands, Hopper's MMA code, the autotuner's timing, speed, and CUDA
graph capture. On a GPU the same script checks those it can:

    python3 benchmarks/cpu_triton_interpret.py --device cuda --out DIR      (~1-2 min on an H200)

first runs the op inside torch.compile(fullgraph), warmed, captured in one CUDA graph and
replayed on new input, against eager PyTorch; then compiles every config for real (at batch
256, 224 px by default: the ladder's shapes), recording each compiled kernel's shared memory,
registers and spills, times each config and the autotuned path (triton.testing.do_bench,
median ms). A forced config Triton refuses as OutOfResources is "expected" where its operand
buffers alone exceed 227 KiB (float32's two largest: the autotuner drops them), a failure where
they fit. No case starts after --budget seconds (240 on a GPU); fp16 runs before fp32.

Writes DIR/cpu_triton_interpret.json (interpreter) or DIR/gpu_triton_check.json (GPU). Exit 0
when every checked case passed, 1 when one failed, 3 when the interpreter/GPU is not there.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Edge cases beyond ResNet-50's shapes: (batch, side, K, N), each with a residual and ReLU.
EDGES = ((1, 1, 64, 64), (2, 5, 96, 80), (1, 7, 200, 136), (3, 3, 2048, 24))


def _bf16_dot_probe() -> dict:
    """How far the interpreter's own tl.dot is from torch on a 16x16 bfloat16 product (no
    labkit code in it): where it is wrong, bfloat16 cases cannot be judged here."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def dot16(a_ptr, b_ptr, c_ptr):  # noqa: ANN001, ANN202
        o = tl.arange(0, 16)
        a = tl.load(a_ptr + o[:, None] * 16 + o[None, :])
        b = tl.load(b_ptr + o[:, None] * 16 + o[None, :])
        tl.store(c_ptr + o[:, None] * 16 + o[None, :], tl.dot(a, b))

    g = torch.Generator().manual_seed(0)
    a, b = (torch.randn(16, 16, generator=g).bfloat16() for _ in range(2))
    c = torch.empty(16, 16)
    dot16[(1,)](a, b, c)
    want = a.float() @ b.float()
    return {"max_rel": float((c - want).abs().max() / want.abs().max())}


def _configs(fe: object, name: str) -> list[tuple]:
    """The configs a run forces: a set of fused_epilogue.TUNING_SETS, or what 'wide' adds."""
    if name == "wide-extra":
        return list(fe.WIDE_EXTRA_CONFIGS)
    return list(fe.TUNING_SETS[name])


def _sweep(fe: object, torch: object, args: argparse.Namespace, interpret: bool,
           device: str) -> list[dict]:
    dtypes = [getattr(torch, d) for d in args.dtypes.split(",")]
    configs = _configs(fe, args.configs)
    shapes = fe.resnet50_gemm_shapes(args.batch, args.image)
    if args.quick:   # the test's few: two ResNet shapes, two configs, two edges
        shapes, configs = [shapes[0], shapes[-1]], configs[::3][:2]
    cases = []
    for shape in shapes:
        batch, side, k, n = args.batch, shape["side"], shape["K"], shape["N"]
        for residual, relu in ((True, True), (False, True), (False, False)):
            cases.append((batch, side, k, n, residual, relu, True, False))
        if shape["residual"]:   # a conv3: also with the 3x3's bias + ReLU as its prologue
            cases.append((batch, side, k, n, True, True, True, True))
    for batch, side, k, n in EDGES[: 2 if args.quick else None]:
        cases.append((batch, side, k, n, True, True, True, False))
        cases.append((batch, side, k, n, True, True, False, False))   # NCHW input: to_rows copies
        cases.append((batch, side, k, n, True, True, True, True))     # off the tiles, with a prologue
    rows: list[dict] = []
    for dtype in dtypes:
        for batch, side, k, n, residual, relu, nhwc, prologue in cases:
            for config in configs + ([] if interpret else [None]):   # None: the autotuner
                if args.budget and time.perf_counter() - args.started > args.budget:
                    args.cut = f"stopped at {args.budget:.0f} s (--budget) after {len(rows)} cases"
                    return rows
                started = time.perf_counter()
                row = fe.check_case(batch, side, k, n, residual, relu, dtype, config, interpret,
                                    device, channels_last=nhwc, prologue=prologue)
                row["seconds"] = round(time.perf_counter() - started, 3)
                _expected_misfit(fe, row, config, dtype)
                if not interpret and "error" not in row and not prologue:   # _time has no prologue
                    row["device_ms"] = _time(fe, torch, batch, side, k, n, residual, relu, dtype,
                                             config, device, nhwc)
                rows.append(row)
                print(f"{row['dtype']:>8} M={row['M']:<6} K={k:<5} N={n:<5} res={residual!s:<5} "
                      f"relu={relu!s:<5} pro={prologue!s:<5} {row['layout']:<13} {row['config']:<17} "
                      f"max_rel={row.get('max_rel', float('nan')):.2e} "
                      f"{'pass' if row['passed'] else 'FAIL ' + row.get('error', '')}", flush=True)
    return rows


SHARED_LIMIT = 227 * 1024   # shared memory one block may take on Hopper (sm_90)


def _expected_misfit(fe: object, row: dict, config: tuple | None, dtype: object) -> None:
    """A forced config that Triton refuses as out of resources where its operand buffers alone
    exceed the SM's shared memory is as predicted (the autotuner drops it and times the rest):
    marked expected, not a failure. Refused where they fit, it is a finding: a failure."""
    if config is None or "OutOfResources" not in row.get("error", ""):
        return
    need = fe.shared_memory_bytes(config, dtype.itemsize)
    if need > SHARED_LIMIT:
        row["expected"] = f"operands need {need // 1024} KiB > {SHARED_LIMIT // 1024} KiB a block"


def _time(fe: object, torch: object, batch: int, side: int, k: int, n: int, residual: bool,
          relu: bool, dtype: object, config: tuple | None, device: str, nhwc: bool) -> float | None:
    """The op path's median device ms for one case and config (triton.testing.do_bench)."""
    from triton.testing import do_bench

    layout = torch.channels_last if nhwc else torch.contiguous_format
    x = torch.randn(batch, k, side, side, device=device, dtype=dtype).contiguous(memory_format=layout)
    w = torch.randn(k, n, device=device, dtype=dtype) / k ** 0.5
    b = torch.randn(n, device=device, dtype=dtype)
    r = (torch.randn(batch, n, side, side, device=device, dtype=dtype).contiguous(memory_format=layout)
         if residual else None)
    try:
        return float(do_bench(lambda: fe.triton_conv1x1(x, w, b, r, relu, config), warmup=5, rep=25))
    except Exception:  # noqa: BLE001 -- the check row already says why a config cannot run
        return None


def _compiled_graph_check(fe: object, torch: object, device: str) -> dict:
    """The op inside torch.compile(fullgraph), warmed (the autotuner tunes here), captured in
    one CUDA graph, replayed on new input: equal to eager PyTorch? (GPU only)"""
    try:
        return _compiled_graph(fe, torch, device)
    except Exception as failure:  # noqa: BLE001 -- recorded, the run goes on
        return {"passed": False, "error": f"{type(failure).__name__}: {str(failure)[:500]}"}


def _compiled_graph(fe: object, torch: object, device: str) -> dict:
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(256, 64, 1).to(device, torch.float16)
    conv2 = torch.nn.Conv2d(64, 256, 1).to(device, torch.float16)
    first, second = fe.Conv1x1(conv, "op").to(device), fe.Conv1x1(conv2, "op").to(device)

    def block(x: torch.Tensor) -> torch.Tensor:
        return second(torch.relu(first(x)) * 0.5, residual=x)

    def eager(x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(torch.relu(torch.nn.functional.conv2d(x, conv.weight, conv.bias)) * 0.5)
        return torch.relu(torch.nn.functional.conv2d(y, conv2.weight, conv2.bias) + x)

    x = torch.randn(32, 256, 28, 28, device=device, dtype=torch.float16).contiguous(
        memory_format=torch.channels_last)
    compiled = torch.compile(block, fullgraph=True)
    with torch.no_grad():
        for _ in range(3):
            compiled(x)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y = compiled(x)
        x.copy_(torch.randn_like(x))
        graph.replay()
        torch.cuda.synchronize()
        want = eager(x)
    out = fe.compare(y.float(), want.float(), 1e-2)
    out["channels_last"] = bool(y.is_contiguous(memory_format=torch.channels_last))
    out["passed"] = out["passed"] and out["channels_last"]
    out["tuned"] = fe.tuned()
    return out


NETWORK_CONFIG = (64, 128, 64, 4, 4)


def _network_check(fe: object, torch: object, batch: int = 2, image: int = 32) -> dict:
    """The folded ResNet-50 with its 33 1x1 convolutions as the custom op, the op's CPU kernel
    swapped for the interpreted Triton kernel (this process only): eager and through Inductor
    on this CPU (the strides Inductor hands the op), against the folded network in float32."""
    from labkit.chapters.ch08_inference_ladder import ladder, numerics

    calls: list[list[int]] = []

    def interpreted(x: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor,
                    residual: torch.Tensor | None, relu: bool) -> torch.Tensor:
        calls.append(list(x.stride()))
        return fe.triton_conv1x1(x, weight_t, bias, residual, relu, config=NETWORK_CONFIG,
                                 interpret=True)

    try:
        fe.gemm_bias_res_relu.register_kernel("cpu")(interpreted)
        settings = ladder.Settings(channels_last=True, fold_bn=True, batch=batch)
        folded = ladder.build_model(settings, ladder.resnet.resnet50, 0, image).eval()
        images = numerics.fixed_images(batch, image).contiguous(memory_format=torch.channels_last)
        model = fe.GemmResNet(folded, fe.op_backend).eval()
        torch._dynamo.reset()
        with torch.no_grad():
            want = folded(images)
            eager = model(images)
            in_eager = len(calls)
            compiled = torch.compile(model, fullgraph=True)(images)
        eager_error = float(numerics.relative_error(eager, want))
        compiled_error = float(numerics.relative_error(compiled, want))
        return {"batch": batch, "image": image, "config": fe.config_name(NETWORK_CONFIG),
                "kernel_calls_eager": in_eager, "kernel_calls_inductor": len(calls) - in_eager,
                "rel_error_eager": eager_error, "rel_error_inductor": compiled_error,
                "tolerance": 1e-5, "passed": max(eager_error, compiled_error) <= 1e-5
                and in_eager == len(calls) - in_eager == len(model.replaced)}
    except Exception as failure:  # noqa: BLE001 -- recorded, the run goes on
        return {"passed": False, "error": f"{type(failure).__name__}: {str(failure)[:500]}"}


def _summary(rows: list[dict]) -> dict:
    by: dict[str, dict] = {}
    for row in rows:
        cell = by.setdefault(f"{row['dtype']} {row['config']}",
                             {"cases": 0, "failed": 0, "worst_max_rel": 0.0, "worst_rel_l2": 0.0})
        cell["cases"] += 1
        cell["failed"] += not row["passed"] and "expected" not in row
        for key in ("max_rel", "rel_l2"):
            if key in row:
                cell[f"worst_{key}"] = max(cell[f"worst_{key}"], row[key])
    return by


def dumps(record: dict) -> str:
    """The record as JSON with one case a line (hundreds of cases stay readable and diffable)."""
    cases = record.get("cases")
    head = json.dumps({k: v for k, v in record.items() if k != "cases"}, indent=1)
    if cases is None:
        return head + "\n"
    lines = ",\n".join("  " + json.dumps(case) for case in cases)
    return head[:-2] + ',\n "cases": [\n' + lines + "\n ]\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="directory for the JSON")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                        help="cpu: Triton's interpreter (TRITON_INTERPRET=1); cuda: compiled")
    parser.add_argument("--batch", type=int, default=None, help="default 1 (cpu) / 256 (cuda)")
    parser.add_argument("--image", type=int, default=None, help="default 200 (cpu) / 224 (cuda)")
    parser.add_argument("--dtypes", default="float16,float32", help="comma-separated")
    parser.add_argument("--quick", action="store_true", help="a few cases only (the test's)")
    parser.add_argument("--configs", default="standard", choices=("standard", "wide", "wide-extra"),
                        help="the configs forced in turn: fused_epilogue.TUNING_SETS' 'standard' "
                             "(the default), 'wide', or only the configs 'wide' adds ('wide-extra')")
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds after which no case starts (default: none on cpu, 240 on cuda)")
    args = parser.parse_args(argv)
    interpret = args.device == "cpu"
    args.batch = args.batch or (1 if interpret else 256)
    args.image = args.image or (200 if interpret else 224)
    args.budget = args.budget if args.budget is not None else (None if interpret else 240.0)
    args.started, args.cut = time.perf_counter(), None
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / ("cpu_triton_interpret.json" if interpret else "gpu_triton_check.json")

    import torch

    from labkit.chapters.ch08_inference_ladder import fused_epilogue as fe

    why = fe.interpreter_missing() if interpret else fe.triton_available()
    record: dict = {"torch": torch.__version__, "argv": sys.argv[1:], "batch": args.batch,
                    "image": args.image, "configs": [fe.config_name(c) for c in _configs(fe, args.configs)]}
    if interpret:
        record["machine"] = "this CPU, Triton interpreter"
        record["cpu"] = platform.processor() or platform.machine()
        record["note"] = ("NOT an H200 result: Triton's interpreter ran the kernel's source with "
                          "numpy on CPU tensors. It checks indexing, masks, strides, the epilogue's "
                          "arithmetic and the output layout; it says nothing of speed, shared "
                          "memory, registers, TF32, Hopper's MMA code or the autotuner's choice.")
    else:
        record["machine"] = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU"
    if why:
        record["skipped"] = why
        path.write_text(dumps(record))
        print(f"not run: {why}")
        return 3
    import triton

    record["triton"] = triton.__version__
    started = time.perf_counter()
    if not interpret:   # first: the lever's own path, and quick
        record["compiled_cuda_graph"] = _compiled_graph_check(fe, torch, args.device)
        print(f"op in torch.compile + CUDA graph: {record['compiled_cuda_graph']}", flush=True)
    rows = _sweep(fe, torch, args, interpret, args.device)
    record["cases"] = rows
    record["summary"] = _summary(rows)
    if args.cut:
        record["cut"] = args.cut
    failed = [r for r in rows if not r["passed"] and "expected" not in r]
    if interpret and "bfloat16" not in args.dtypes:
        probe = _bf16_dot_probe()
        probe["verdict"] = ("the interpreter's tl.dot is wrong on bfloat16 operands (it multiplies "
                            "their bit patterns as integers): bfloat16 is not checked here"
                            if probe["max_rel"] > 1e-2 else "the interpreter's bfloat16 tl.dot is right")
        record["bf16_dot_probe"] = probe
    if not interpret and not record["compiled_cuda_graph"]["passed"]:
        failed.append(record["compiled_cuda_graph"])
    if interpret:
        record["network"] = _network_check(fe, torch)
        print(f"ResNet-50 on the interpreted kernel: {record['network']}", flush=True)
        if not record["network"]["passed"]:
            failed.append(record["network"])
    record["seconds"] = round(time.perf_counter() - started, 1)
    record["passed"] = sum(bool(r["passed"]) for r in rows)
    record["expected_misfits"] = sum("expected" in r for r in rows)
    record["failed"] = len(failed)
    path.write_text(dumps(record))
    print(f"{record['passed']} of {len(rows)} cases passed, {record['expected_misfits']} configs "
          f"too big for shared memory as predicted, {len(failed)} failed, in {record['seconds']} s"
          f"{'; ' + args.cut if args.cut else ''}; wrote {path}")
    if failed and all("only 0-dimensional arrays" in str(r.get("error", "")) for r in failed):
        print("every failure is Triton 3.6's interpreter under NumPy 2.4, not the kernel "
              "(triton-lang/triton#9171): run it with numpy<2.4, e.g. pip install 'numpy<2.4'")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
