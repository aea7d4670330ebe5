"""Chapter 06, DDP and layout drift: C14 (the seed's "layout drift" and its backward-hook fix).

The seed's section 4.3 says that with channels_last and AMP, DDP's gradient all-reduce sees
tensors whose strides and storage offsets differ, so the ranks' views of the data disagree:
NCCL reads illegal memory or the numbers drift silently. Its fix, quoted exactly:

    def _ddp_reduce_hook(grad):
        if grad is not None:
            # force the layout back, so channels_last and NCCL get along
            return grad.contiguous(memory_format=torch.contiguous_format)
    model.register_full_backward_hook(_ddp_reduce_hook)

"This hook makes every gradient standard row-major (C-contiguous) before it enters NCCL's
all-reduce." The check reads what chapter 06's DDP run (labkit.chapters.ch06_ddp_layout_drift.ddp_worker) measured in every
rank: whether the drift was provoked (DDP's own warning), whether the ranks' parameters stay
bit-identical, whether anything raised, and what the seed's hook did when applied as written.
"""

from __future__ import annotations

from collections.abc import Mapping

from labkit.claims.core import CONFIRMED, DEPENDS, REFUTED, SEED_STRIDES, Claim
from labkit.core import discovery

CHAPTER = discovery.chapter_key(__name__)

SECTION = "4.3 Layout drift in distributed training"
SECTION_ZH = "4.3 分布式训练中的layout漂移问题"
SEED_FIX_CODE = (
    "def _ddp_reduce_hook(grad):\n"
    "    if grad is not None:\n"
    "        return grad.contiguous(memory_format=torch.contiguous_format)\n"
    "model.register_full_backward_hook(_ddp_reduce_hook)")
MAX_ABS_DIFF_ACROSS_RANKS = 0.0  # "identical" means bit-identical: all-reduce gives every rank the same sum


def check_c14(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    drifts, fix = list(ev["drift_variants"]), ev["seed_fix"]
    tolerance = th["max_abs_diff_across_ranks"]
    provoked = [d for d in drifts if d["warnings"] > 0]
    steps = max((d.get("steps", 0) for d in drifts), default=0)
    if not provoked:
        return (DEPENDS, f"no drift variant raised DDP's stride warning in {steps} steps, so this "
                "run never produced the drift the seed describes", "whether the drift was provoked")
    if not ev["control_params_identical"]:
        return (DEPENDS, "the ranks' parameters differ even when the model is converted before "
                "wrapping (no drift), so rank agreement cannot tell what the drift does here",
                "a rank divergence that has nothing to do with layout")
    broken = [d for d in drifts if d.get("error") or not d["params_identical"] or d.get("wrong_grads")
              or d.get("max_abs_diff_across_ranks", 0.0) > tolerance]
    drift_text = "; ".join(
        f"{d['name']}: {d['warnings']} warnings, "
        + (f"raised {d['error']}" if d.get("error") else
           (f"gradients wrong for {', '.join(d['wrong_grads'])}" if d.get("wrong_grads") else
            "gradients right")
           + (", parameters bit-identical on every rank" if d["params_identical"] else
              f", parameters differ across ranks by up to {d.get('max_abs_diff_across_ranks')}"))
        for d in drifts)
    if fix.get("error"):
        fix_text = f"the seed's hook as written raises {fix['error']} in the first backward"
        fix_works = False
    else:
        fix_works = fix["warnings"] == 0 and fix["params_identical"]
        fix_text = (f"the seed's hook ran; {fix['warnings']} warnings remained, parameters "
                    f"{'identical' if fix['params_identical'] else 'differ'} across ranks")
    text = f"{ev.get('world_size', '?')} ranks over {ev.get('backend', '?')}, {steps} steps: {drift_text}; {fix_text}"
    for other in ev.get("other_variants") or ():
        if other.get("wrong_grads"):
            text += (f"; beyond the seed's setting, {other['name']} gives wrong gradients for "
                     f"{', '.join(other['wrong_grads'])} with {other['warnings']} warnings, the seed's "
                     "hook does not reach them")
    if broken and fix_works:
        return CONFIRMED, text, ""
    if broken:
        how = ("silently and identically on every rank, not as a disagreement between ranks"
               if all(d["params_identical"] for d in broken) else "and the ranks disagree")
        return REFUTED, text + f" (the drift does break the run here, {how}; the seed's fix does not repair it)", ""
    return REFUTED, text + " (the drift costs a strided copy into the buckets; all-reduce stays correct)", ""


C14 = Claim(
    "C14", CHAPTER, SEED_STRIDES, SECTION,
    "With channels_last and AMP, DDP's gradient all-reduce sees differing strides and storage "
    "offsets, so the ranks' data views disagree (NCCL illegal memory access or silent numeric "
    "drift). The fix: a full backward hook, model.register_full_backward_hook(_ddp_reduce_hook), "
    "whose _ddp_reduce_hook(grad) returns grad.contiguous(memory_format=torch.contiguous_format) "
    "when grad is not None.",
    "the drift (provoked: DDP warns 'Grad strides do not match bucket view strides') makes a rank "
    "fail or the ranks' parameters differ, and the seed's hook, applied as written, runs, removes "
    "the warning and keeps the ranks identical",
    "with the drift provoked, every rank's parameters stay bit-identical and nothing fails; or "
    "the seed's hook as written does not run or does not repair the run",
    ("drift_variants", "control_params_identical", "seed_fix"),
    thresholds={"max_abs_diff_across_ranks": MAX_ABS_DIFF_ACROSS_RANKS},
    check=check_c14, section_zh=SECTION_ZH,
    seed_setting="DDP over NCCL on GPUs, a CNN in channels_last, AMP mixed precision")

CLAIMS = [C14]


def evidence_from_run(result: Mapping) -> dict:
    """C14's evidence from a `labkit.chapters.ch06_ddp_layout_drift.ddp_launch.launch` result (all ranks' reports).

    A variant counts as identical only if every rank says so; warnings are rank 0's count
    (every rank warns the same); steps is the number of training steps each variant ran.
    """
    ranks = result["ranks"]
    by_name = {report["variant"]["name"]: [rank_reports[i] for rank_reports in ranks]
               for i, report in enumerate(ranks[0])}

    def summary(name: str) -> dict:
        reports = by_name[name]
        first = reports[0]
        error = first.get("error")
        return {"name": name, "warnings": sum(first["warnings_by_step"]),
                "steps": len(first["warnings_by_step"]),
                "error": f"{error['type']}: {error['message']}" if error else None,
                "params_identical": all(r["params_identical"] for r in reports),
                "wrong_grads": sorted({g for r in reports for o in r.get("observed", [])
                                       for g in o.get("wrong_grads", [])}),
                "max_abs_diff_across_ranks": max(r["max_abs_diff_across_ranks"] for r in reports)}

    drift_names = [n for n in ("a_drift", "e_late_drift") if n in by_name]
    return {"drift_variants": [summary(n) for n in drift_names],
            "control_params_identical": summary("c_convert_first")["params_identical"],
            "seed_fix": summary("b_seed_fix"),
            "seed_hook_fitted": summary("b2_seed_hook_fitted") if "b2_seed_hook_fitted" in by_name else None,
            "other_variants": [summary(n) for n in ("d_bucket_view",) if n in by_name],
            "backend": result["backend"], "world_size": result["world_size"],
            "device": result["device"], "torch": result["torch"],
            "amp_dtype": ranks[0][0].get("amp_dtype")}
