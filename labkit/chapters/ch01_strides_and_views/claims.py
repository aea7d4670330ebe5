"""Chapter 01, strides and views: C1, C3, C4, C8a, C8b, C8c, C11a, C11b.

Each claim below reads on one screen: what the seed says (an English gist, its section),
the rule that decides it, and the check. These claims are about tensor semantics, so
their verdicts are the same on every machine with the same torch (deterministic=True),
except C11b, which depends on which capture tools this torch has (CAPTURE_TOOLS).
"""

from __future__ import annotations

from collections.abc import Mapping

from labkit.claims.core import (
    CONFIRMED,
    DEPENDS,
    REFUTED,
    SEED_STRIDES,
    Claim,
    ClaimError,
)
from labkit.core import discovery

CHAPTER = discovery.chapter_key(__name__)


def check_c1(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    stride, contiguous = tuple(ev["stride"]), bool(ev["is_contiguous"])
    if stride == (1, 4) and not contiguous:
        return CONFIRMED, f"x.t() has strides {stride} and is_contiguous() is False", ""
    return REFUTED, f"x.t() has strides {stride}, is_contiguous() = {contiguous}", ""


C1 = Claim(
    "C1", CHAPTER, SEED_STRIDES, "Chapter 1: what stride and memory layout are",
    "x.t() of a contiguous (3, 4) tensor has strides (1, 4) and is not contiguous.",
    "strides == (1, 4) and is_contiguous() is False", "any other strides or contiguity",
    ("stride", "is_contiguous"), check=check_c1, deterministic=True,
    section_zh="第一章 什么是 stride 与 memory layout",
    seed_text='y x.t() # 转置后 shape(4,3)但底层仍共享原内存 print(y.stride()) # 输出: (1, 4) —— 步长倒置非 contiguous print(y.is_contiguous()) # False')


def check_c3(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    """Judged in the seed's units: strides are element offsets, so the formula counts elements."""
    checked = int(ev["elements_checked"])
    if checked <= 0:
        raise ClaimError("C3: no element addresses were checked; evidence is empty")
    in_elements = int(ev["element_formula_mismatches"])
    if in_elements:
        return REFUTED, (f"{in_elements} of {checked} elements sit elsewhere than "
                         "base + sum(i_k*stride_k) counted in elements"), ""
    return CONFIRMED, (f"all {checked} elements sit at base + sum(i_k*stride_k), counted in "
                       "elements from the view's first element, as the seed defines strides"), ""


C3 = Claim(
    "C3", CHAPTER, SEED_STRIDES, "2.1 How strides work (the physical address formula)",
    "The address of element (i, j, k) is base + i*stride[0] + j*stride[1] + k*stride[2], "
    "with strides counted in elements (the seed's own definition).",
    "the formula, counted in elements from the view's first element, places every element",
    "some element sits elsewhere",
    ("elements_checked", "element_formula_mismatches"),
    check=check_c3, deterministic=True, section_zh="2.1 stride机制详解 (物理地址计算公式)",
    seed_text='给定索引(i, j, k)线性地址为base i×stride[0] j×stride[1] k×stride[2]')


def check_c4(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    shape, stride = tuple(ev["shape"]), tuple(ev["stride"])
    if stride == (12, 1, 4) and shape == (2, 4, 3):
        return CONFIRMED, f"permute(0,2,1) gives shape {shape}, strides {stride}", ""
    return REFUTED, f"permute(0,2,1) gives shape {shape}, strides {stride}", ""


C4 = Claim(
    "C4", CHAPTER, SEED_STRIDES, "2.1 How strides work (table of common stride patterns)",
    "permute(0, 2, 1) of a contiguous [2, 3, 4] tensor has shape [2, 4, 3] and strides [12, 1, 4].",
    "torch reports exactly those strides", "any other strides",
    ("shape", "stride"), check=check_c4, deterministic=True,
    section_zh="2.1 stride机制详解 (常见stride组合对比)",
    seed_text='转置(0,2,1)[2,4,3][12,1,4]')


def check_c8a(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    """The seed states a universal rule, so one counterexample refutes it: a view that works
    on a non-contiguous tensor. The seed's own example (view(-1, 4)) raising does not save it."""
    if not ev["raised"]:
        return REFUTED, "view(-1, 4) on the transposed tensor succeeded", ""
    what = f"{ev['error_type']}: {ev['error_message']}"
    if ev["noncontiguous_view_succeeded"]:
        return (REFUTED, f"the seed's example holds (view(-1, 4) raised {what}), but the rule "
                "does not: view(3, 2, 2, 2) of the same non-contiguous tensor succeeded. view "
                "needs the dims it merges to be stride-compatible, not the tensor contiguous", "")
    return CONFIRMED, f"view raised {what} and no view of the non-contiguous tensor worked", ""


C8a = Claim(
    "C8a", CHAPTER, SEED_STRIDES, "2.5 Where shape alignment breaks (view() fails)",
    "view() requires physically contiguous memory; otherwise a stride-mismatch assertion fires "
    "(the seed's example: view(-1, 4) on a transposed tensor).",
    "view(-1, 4) raises and no view of a non-contiguous tensor succeeds (the rule is universal)",
    "any view of a non-contiguous tensor succeeds, such as view(3, 2, 2, 2) of the seed's "
    "tensor, or view(-1, 4) itself",
    ("raised", "error_type", "error_message", "noncontiguous_view_succeeded"),
    check=check_c8a, deterministic=True, section_zh="2.5 形状对齐失效的触发边界 (view() 失败)",
    seed_text='view()要求张量在内存中物理连续y.is_contiguous() False否则触发stride mismatch断言')


def _as_outcome(value: object) -> object:
    return "error" if value == "error" else tuple(value)


def _differs(case: Mapping) -> bool:
    """The case's shape or error differs from the seed's; an error must carry the seed's text."""
    if _as_outcome(case["observed"]) != _as_outcome(case["seed_says"]):
        return True
    expected_text = case.get("seed_message", "")
    return bool(expected_text) and expected_text not in case.get("message", "")


def check_c8b(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    cases = list(ev["cases"])
    if not cases:
        raise ClaimError("C8b: no broadcasting cases were run")
    wrong = [c for c in cases if _differs(c)]
    if wrong:
        first = wrong[0]
        got = f"{first['observed']}" + (f" ({first['message']})" if first.get("message") else "")
        return (REFUTED, f"{len(wrong)} of {len(cases)} cases differ, e.g. {first['a']} with "
                f"{first['b']} gave {got}, the seed says {first['seed_says']}", "")
    return CONFIRMED, (f"all {len(cases)} broadcasting cases give the seed's shape or its error "
                       "text"), ""


C8b = Claim(
    "C8b", CHAPTER, SEED_STRIDES, "2.5 Where shape alignment breaks (broadcasting out of range)",
    "(1, 4) with (3, 1) broadcasts to (3, 4); (2, 4) with (3, 1) raises 'The size of tensor a (2) must match...'.",
    "every case gives the seed's shape, or raises with the seed's error text",
    "any case gives another shape, no error, or another error text",
    ("cases",), check=check_c8b, deterministic=True,
    section_zh="2.5 形状对齐失效的触发边界 (broadcasting 越界)",
    seed_text='(1, 4)(3, 1)(3, 4) ✅(2, 4)(3, 1)❌ RuntimeError: The size of tensor a (2) must match...')


def check_c8c(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    if not ev["raised"]:
        return REFUTED, "permute(0, 0, 1) did not raise", ""
    what = f"{ev['error_type']}: {ev['error_message']}"
    if ev["error_type"] == "IndexError" and "repeated dim" in ev["error_message"]:
        return CONFIRMED, f"raised {what}", ""
    return (REFUTED, f"repeated dims are rejected, but with {what} "
            "(not IndexError: repeated dim)", "")


C8c = Claim(
    "C8c", CHAPTER, SEED_STRIDES, "2.5 Where shape alignment breaks (permute() degradation)",
    "permute(0, 0, 1) raises IndexError: repeated dim.",
    "an IndexError mentioning 'repeated dim' is raised",
    "no error, or another exception type/text",
    ("raised", "error_type", "error_message"), check=check_c8c, deterministic=True,
    section_zh="2.5 形状对齐失效的触发边界 (permute() 降级)",
    seed_text='permute(0,0,1)非法 —— PyTorch 显式拒绝重复轴抛出IndexError: repeated dim')


def check_c11a(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    shares, copied = bool(ev["shares_storage"]), int(ev["copy_bytes"])
    if shares and copied == 0:
        return CONFIRMED, "as_strided shares the input's storage and the copy detector saw 0 bytes", ""
    return REFUTED, f"shares storage: {shares}, bytes copied: {copied}", ""


C11a = Claim(
    "C11a", CHAPTER, SEED_STRIDES, "3.3 Cache-friendly reshape (the safe bounds of as_strided)",
    "torch.as_strided re-interprets a tensor's storage without copying.",
    "the result shares storage and the copy detector records no copy",
    "a copy is recorded or the storage differs",
    ("shares_storage", "copy_bytes"), check=check_c11a, deterministic=True,
    section_zh="3.3 缓存友好型reshape策略 (as_strided的安全边界)",
    seed_text='该操作不分配新内存仅修改tensor元数据')


# The ways this course knows to capture a function into a graph; a torch that lacks one
# reports it as not available and the verdict rests on the others.
CAPTURE_TOOLS = ("torch.jit.trace", "torch.jit.script", "torch.fx.symbolic_trace",
                 "torch.export.export", "torch.compile(fullgraph=True)")


def check_c11b(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    tried = {name: r for name, r in dict(ev["tools"]).items() if r.get("available", True)}
    if not tried:
        raise ClaimError("C11b: no capture tool was tried")
    worked = sorted(t for t, r in tried.items() if r["ok"] and r["matches_eager"])
    failed = sorted(t for t in tried if t not in worked)
    absent = sorted(set(dict(ev["tools"])) - set(tried))
    missing = f" ({', '.join(absent)} not in this torch)" if absent else ""
    if not worked:
        return CONFIRMED, f"none of {', '.join(failed)} captured as_strided correctly{missing}", ""
    if not failed:
        return (REFUTED, f"all {len(worked)} capture tools tried ({', '.join(worked)}) captured "
                f"as_strided and match eager{missing}", "")
    return (DEPENDS, f"worked: {', '.join(worked)}; failed: {', '.join(failed)}{missing}",
            f"the tool: {', '.join(failed)} fail")


C11b = Claim(
    "C11b", CHAPTER, SEED_STRIDES, "3.3 Cache-friendly reshape (production checklist)",
    "as_strided is 'a non-traceable operation', so it must be kept out of JIT scripts.",
    "every capture tool this torch has fails on a function that uses as_strided",
    "every tool captures it and the captured graph matches eager; 'depends' if only some do",
    ("tools",), check=check_c11b, section_zh="3.3 缓存友好型reshape策略 (生产环境校验清单)",
    seed_text='在JIT脚本中禁用——as_strided非可追踪操作')

CLAIMS = [C1, C3, C4, C8a, C8b, C8c, C11a, C11b]
