"""`python -m labkit.audit SPEC [--batch N] [--image S] [--device D] [--format F] [--dtype T]
[--input FILE.pt] [--out DIR]`.

Bad input gets one clear line on stderr and exit status 2, never a traceback: a spec that
does not import, a model that rejects the input, a device this machine does not have.

On a CPU the default plan is a cheap one (CPU_ROUNDS rounds of CPU_REP_MS, no export paths
unless --exports asks), and the output's first line says so: a shared 2-core machine under
load took 97 s for ResNet-50 with the GPU's plan cut down (review 2026-12-05t 08-09-99 item 10).
Since review 2026-12-05u item 2 the CPU plan times recommend.MIN_ROUNDS rounds (two gave a
different decision on each run) at the chapter's 112 px, and the decisions name their input.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import torch

from labkit.audit import audit, exports, models, report

EXIT_BAD_INPUT = 2
GPU_ROUNDS, GPU_REP_MS = 5, 1000.0
# the cheaper CPU plan (--rounds and --exports ask for more): the fewest rounds a fix can be kept
# on (recommend.MIN_ROUNDS), each sampling budget split over them (bench.compare)
CPU_ROUNDS, CPU_REP_MS = 3, 600.0
CPU_IMAGE = 112   # chapter 09's CPU size (env.sizes' cnn_image): the command and the chapter decide alike


def parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    p = argparse.ArgumentParser(
        prog="python -m labkit.audit",
        description="Audit a model's memory layouts, copies, DDP layout contract, export paths, "
                    "and measure the fixes.")
    p.add_argument("model", help="torchvision:NAME (random weights), mypkg.mymod:build_model, "
                                 f"or a built-in: {', '.join(models.BUILTIN)}")
    p.add_argument("--batch", type=int, default=None, help="batch size (default: this machine's)")
    p.add_argument("--image", type=int, default=None,
                   help=f"image side (default 224 on a GPU, {CPU_IMAGE} on a CPU)")
    p.add_argument("--channels", type=int, default=3)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--format", default="channels_last", choices=sorted(audit.FORMATS))
    p.add_argument("--dtype", default="float32", choices=list(audit.DTYPES),
                   help="the precision the model and input are audited in (default float32)")
    p.add_argument("--input", type=Path, default=None,
                   help="a saved example batch (torch.save of one [N, C, H, W] tensor) instead of a "
                        "random one; --batch, --image and --channels are then read from it")
    p.add_argument("--exports", default=None,
                   help=f"comma-separated subset of {','.join(exports.PATHS)}, or 'none' "
                        "(default: all on a GPU, none on a CPU: pass e.g. --exports trace,export)")
    p.add_argument("--rounds", type=int, default=None,
                   help=f"interleaved rounds per timing (0: no timing; default {GPU_ROUNDS} on a GPU, "
                        f"{CPU_ROUNDS} on a CPU, the CPU's cheaper plan; a fix is timed in at least 3)")
    p.add_argument("--out", type=Path, default=None, help="folder for report.md and report.html")
    return p


def _paths(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    if text.strip() == "none":
        return ()
    chosen = tuple(t.strip() for t in text.split(",") if t.strip())
    unknown = sorted(set(chosen) - set(exports.PATHS))
    if unknown:
        raise audit.AuditError(f"unknown export paths {unknown}; choose from {', '.join(exports.PATHS)}")
    return chosen


def saved_input(path: Path) -> torch.Tensor:
    """The example batch saved at `path` (torch.save of one floating-point [N, C, H, W] tensor,
    read with weights_only=True: a file cannot run code); AuditError says what is wrong."""
    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise audit.AuditError(f"--input {path}: no such file") from None
    except Exception as error:
        raise audit.AuditError(f"--input {path}: not a file torch.save wrote with one tensor "
                               f"({type(error).__name__}: {str(error).splitlines()[0][:160] if str(error) else ''})") from None
    if not isinstance(loaded, torch.Tensor) or loaded.dim() != 4 or not loaded.is_floating_point():
        got = (f"a tensor of shape {tuple(loaded.shape)} {loaded.dtype}" if isinstance(loaded, torch.Tensor)
               else type(loaded).__name__)
        raise audit.AuditError(f"--input {path}: needs one floating-point [N, C, H, W] tensor, got {got} "
                               "(save it with torch.save(batch, path))")
    if loaded.numel() == 0:  # a batch of no images: nothing to time or compare
        raise audit.AuditError(f"--input {path}: the tensor is empty (shape {tuple(loaded.shape)}); "
                               "save a batch of at least one image")
    return loaded


def cpu_plan(args: argparse.Namespace, rounds: int) -> str:
    """The line that says which CPU plan ran: the cheaper default's parts, or what was asked."""
    said = [f"{rounds} interleaved rounds sharing {CPU_REP_MS:.0f} ms a variant per timing"
            + (" (the CPU default: --rounds N for more)" if args.rounds is None else " (--rounds)")]
    said.append("export paths off (the CPU default: --exports trace,export runs them)"
                if args.exports is None else f"export paths: {args.exports} (--exports)")
    return "CPU plan: " + "; ".join(said)


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns the exit status (0, or EXIT_BAD_INPUT with a message)."""
    args = parser().parse_args(argv)
    try:
        where = audit.resolve_device(args.device)
        cuda = where.type == "cuda"
        batch = args.batch if args.batch is not None else (64 if cuda else 2)
        image = args.image if args.image is not None else (224 if cuda else CPU_IMAGE)
        rounds = args.rounds if args.rounds is not None else (GPU_ROUNDS if cuda else CPU_ROUNDS)
        if batch < 1 or image < 1 or args.channels < 1 or rounds < 0:
            raise audit.AuditError("--batch, --image and --channels must be at least 1, --rounds at least 0")
        paths = _paths(args.exports)
        if paths is None and not cuda:
            paths = ()  # the CPU's cheaper plan: export paths only when asked
        if args.input is not None:
            example = saved_input(args.input)
            batch, height, image = example.shape[0], example.shape[-2], example.shape[-1]
            if height != image and args.model == "labkit:vit":
                # the built-in ViT's position table is sized for square images of one side
                raise audit.AuditError(f"--input {args.input}: labkit:vit needs square images, got "
                                       f"{height}x{image} (H x W)")
        else:
            torch.manual_seed(0)
            example = torch.randn(batch, args.channels, image, image)
        model = models.load(args.model, image=image)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = audit.run(model, example, device=args.device, memory_format=args.format,
                               name=args.model, export_paths=paths, recommend_rounds=rounds,
                               recommend_rep_ms=GPU_REP_MS if cuda else CPU_REP_MS, dtype=args.dtype)
    except (audit.AuditError, models.ModelSpecError) as error:
        print(f"labkit.audit: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except torch.OutOfMemoryError:
        print(f"labkit.audit: out of memory at batch {batch}, image {image}: try a smaller --batch",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if not cuda:
        print(cpu_plan(args, rounds) + "\n")
    print(report.text(result))
    if args.out is not None:
        try:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "report.md").write_text(report.markdown(result))
            (args.out / "report.html").write_text(report.to_html(result))
        except OSError as error:
            print(f"labkit.audit: cannot write the report to {args.out}: {error}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(f"\nwrote {args.out / 'report.md'} and {args.out / 'report.html'}")
    return 0
