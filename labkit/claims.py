"""The seed articles' claims, and verdicts computed from measured evidence.

Each `Claim` names where it comes from (seed file and section), what it states, what
would confirm or refute it, and the thresholds that decide, written down as named
constants. A `Verdict` is only ever made by `Claim.judge(evidence)`: its check function
reads the evidence a chapter measured, so the same code gives `confirmed` on one
machine and `refuted` or `depends` on another. Nothing here types a verdict in.

    from labkit import claims
    verdict = claims.get("C1").judge({"shape": [4, 3], "stride": [1, 4], "is_contiguous": False})
    claims.table([verdict])            # HTML in a notebook; .structure() for nbval

`REGISTRY` holds every chapter's claims; those no chapter tests yet have no check and
show in the ledger as 'not yet tested'. The check functions and their thresholds live in
`labkit.claim_checks`.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from labkit import claim_checks as checks
from labkit import env, results
from labkit.claim_checks import (  # re-exported: chapters and tests read them here
    CACHE_LINE_BYTES,
    CHANNELS_LAST_FASTER_RATIO,
    CONFIRMED,
    COSTLY_RATIO,
    DEPENDS,
    MISALIGNED_COSTLY_RATIO,
    NARROW_COSTLY_RATIO,
    OUTCOMES,
    REFUTED,
    STRIDE_AWARE_WIN_RATIO,
    STRIDED_PENALTY_RATIO,
    ClaimError,
)

SEED_STRIDES = "seeds/000_48436a37f9535c95.txt"  # "张量形状对齐失效导致300%延迟激增..."
SEED_PIPELINE = "seeds/004_0e8e9a334eff3b12.txt"  # "工业级张量流水线优化手册..."


class _JudgeToken:
    """Only `Claim.judge` and `Verdict.from_dict` hold this: a verdict can't be typed in."""


_TOKEN = _JudgeToken()


@dataclass(frozen=True)
class Verdict:
    """The outcome of one claim's check on one machine's evidence.

    outcome is 'confirmed', 'refuted' or 'depends' (then depends_on says on what); reason
    is one sentence built from the numbers; evidence and thresholds are what decided it.
    recorded=True marks a verdict read back from a saved run rather than measured now.
    """

    claim_id: str
    outcome: str
    reason: str
    evidence: Mapping
    thresholds: Mapping
    depends_on: str = ""
    machine: str = ""
    recorded: bool = False
    issued_by: object = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.issued_by is not _TOKEN:
            raise ClaimError("a Verdict is computed, never typed in: call "
                             f"claims.get({self.claim_id!r}).judge(evidence)")
        if self.outcome not in OUTCOMES:
            raise ClaimError(f"outcome must be one of {OUTCOMES}, got {self.outcome!r}")
        if not self.evidence:
            raise ClaimError(f"{self.claim_id}: a verdict needs evidence, got none")
        if (self.outcome == DEPENDS) != bool(self.depends_on):
            raise ClaimError(f"{self.claim_id}: 'depends' and only 'depends' names what it depends on")

    def to_dict(self) -> dict:
        """Plain JSON values, as saved by `labkit.results`."""
        return {"claim_id": self.claim_id, "outcome": self.outcome, "reason": self.reason,
                "depends_on": self.depends_on, "machine": self.machine,
                "evidence": results.to_jsonable(self.evidence), "thresholds": dict(self.thresholds)}

    @classmethod
    def from_dict(cls, data: Mapping, recorded: bool = True) -> Verdict:
        """A verdict read back from saved results (marked recorded)."""
        try:
            return cls(claim_id=data["claim_id"], outcome=data["outcome"], reason=data["reason"],
                       evidence=data["evidence"], thresholds=data.get("thresholds", {}),
                       depends_on=data.get("depends_on", ""), machine=data.get("machine", ""),
                       recorded=recorded, issued_by=_TOKEN)
        except KeyError as missing:
            raise ClaimError(f"saved verdict lacks {missing}; the results file is damaged "
                             "or from another version") from None

    @property
    def label(self) -> str:
        """'refuted', or 'depends (on ...)'."""
        return f"{self.outcome} (on {self.depends_on})" if self.depends_on else self.outcome

    def _repr_html_(self) -> str:
        return VerdictTable([self])._repr_html_()


Check = Callable[[Mapping, Mapping], tuple[str, str, str]]  # -> (outcome, reason, depends_on)


@dataclass(frozen=True)
class Claim:
    """One statement from a seed article, and how a measurement decides it.

    deterministic: the verdict follows from tensor semantics (strides, errors), not from
    timings, so it is the same on every machine with this torch and nbval may check it.
    """

    id: str
    chapter: str
    seed: str
    section: str
    statement: str
    confirm_if: str
    refute_if: str
    evidence_keys: tuple[str, ...] = ()
    thresholds: Mapping[str, float] = field(default_factory=dict)
    check: Check | None = None
    deterministic: bool = False

    @property
    def tested(self) -> bool:
        """Whether a chapter tests this claim yet (it has a check function)."""
        return self.check is not None

    def judge(self, evidence: Mapping, machine: str = "") -> Verdict:
        """Compute this claim's verdict from measured evidence, with its thresholds."""
        if self.check is None:
            raise ClaimError(f"{self.id} is not tested yet (chapter {self.chapter}); "
                             "it is listed in the ledger as 'not yet tested'")
        if not isinstance(evidence, Mapping) or not evidence:
            raise ClaimError(f"{self.id}: judge() needs the measured evidence as a dict "
                             f"with keys {list(self.evidence_keys)}, got {evidence!r}")
        missing = [k for k in self.evidence_keys if k not in evidence]
        if missing:
            raise ClaimError(f"{self.id}: evidence lacks {missing}; measure them and pass "
                             f"a dict with keys {list(self.evidence_keys)}")
        outcome, reason, depends_on = self.check(evidence, self.thresholds)
        return Verdict(self.id, outcome, reason, dict(evidence), dict(self.thresholds),
                       depends_on, machine or env.device_key(), issued_by=_TOKEN)

    def _repr_html_(self) -> str:
        rows = [("claim", f"{self.id}: {self.statement}"), ("source", f"{self.seed} § {self.section}"),
                ("confirmed if", self.confirm_if), ("refuted if", self.refute_if)]
        rows += [(f"threshold {k}", str(v)) for k, v in self.thresholds.items()]
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(v)}</td></tr>" for k, v in rows)
        return f"<table>{body}</table>"


# ---------------------------------------------------------------------------------------
# The registry

def _claim(id: str, chapter: str, seed: str, section: str, statement: str, confirm_if: str = "",
           refute_if: str = "", evidence_keys: tuple[str, ...] = (), **kwargs: object) -> Claim:
    return Claim(id, chapter, seed, section, statement, confirm_if, refute_if, evidence_keys,
                 **kwargs)


_CLAIMS = [
    _claim("C1", "01", SEED_STRIDES, "第一章 什么是 stride 与 memory layout",
           "x.t() of a contiguous (3, 4) tensor has strides (1, 4) and is not contiguous.",
           "strides == (1, 4) and is_contiguous() is False", "any other strides or contiguity",
           ("stride", "is_contiguous"), check=checks.check_c1, deterministic=True),
    _claim("C3", "01", SEED_STRIDES, "2.1 stride机制详解 (物理地址计算公式)",
           "The address of element (i, j, k) is base + i*stride[0] + j*stride[1] + k*stride[2].",
           "the formula gives every element's real address (data_ptr based)",
           "some element sits elsewhere; 'depends' if it holds only counted in elements",
           ("elements_checked", "element_formula_mismatches", "byte_formula_mismatches"),
           check=checks.check_c3, deterministic=True),
    _claim("C4", "01", SEED_STRIDES, "2.1 stride机制详解 (常见stride组合对比)",
           "permute(0, 2, 1) of a contiguous [2, 3, 4] tensor has shape [2, 4, 3] and strides [12, 1, 4].",
           "torch reports exactly those strides", "any other strides",
           ("shape", "stride"), check=checks.check_c4, deterministic=True),
    _claim("C8a", "01", SEED_STRIDES, "2.5 形状对齐失效的触发边界 (view() 失败)",
           "view() fails on a transposed (non-contiguous) tensor: it needs physically contiguous memory.",
           "view(-1, 4) raises and no view of a non-contiguous tensor succeeds",
           "view succeeds; 'depends' when some views of a non-contiguous tensor work",
           ("raised", "error_type", "error_message", "noncontiguous_view_succeeded"),
           check=checks.check_c8a, deterministic=True),
    _claim("C8b", "01", SEED_STRIDES, "2.5 形状对齐失效的触发边界 (broadcasting 越界)",
           "(1, 4) with (3, 1) broadcasts to (3, 4); (2, 4) with (3, 1) raises 'The size of tensor a (2) must match...'.",
           "every case gives the seed's shape or error", "any case differs",
           ("cases",), check=checks.check_c8b, deterministic=True),
    _claim("C8c", "01", SEED_STRIDES, "2.5 形状对齐失效的触发边界 (permute() 降级)",
           "permute(0, 0, 1) raises IndexError: repeated dim.",
           "an IndexError mentioning 'repeated dim' is raised",
           "no error, or another exception type/text",
           ("raised", "error_type", "error_message"), check=checks.check_c8c, deterministic=True),
    _claim("C11a", "01", SEED_STRIDES, "3.3 缓存友好型reshape策略 (as_strided的安全边界)",
           "torch.as_strided re-interprets a tensor's storage without copying.",
           "the result shares storage and the copy detector records no copy",
           "a copy is recorded or the storage differs",
           ("shares_storage", "copy_bytes"), check=checks.check_c11a, deterministic=True),
    _claim("C11b", "01", SEED_STRIDES, "3.3 缓存友好型reshape策略 (生产环境校验清单)",
           "as_strided cannot be traced by the JIT ('非可追踪操作'), so it must be avoided in JIT scripts.",
           "torch.jit.trace, torch.jit.script and torch.compile all fail on it",
           "they capture it and match eager; 'depends' if only some do",
           ("tools",), check=checks.check_c11b),
    _claim("C2", "02", SEED_STRIDES, "第一章 典型性能对比 (A100, FP16 batch64)",
           "x.transpose(0,1).matmul(w) pays an implicit contiguous copy: 84.2 ms against 21.7 ms with .contiguous() first.",
           f"a copy is recorded in the implicit path and it is > {COSTLY_RATIO}x slower than the explicit one",
           f"no implicit copy, or implicit/explicit <= {COSTLY_RATIO}",
           ("cases",), thresholds={"costly_ratio": COSTLY_RATIO}, check=checks.check_c2),
    _claim("C5", "02", SEED_STRIDES, "2.2 contiguous张量的本质 (对齐优化效果对比)",
           "Contiguous tensors are aligned to 64-byte cache lines; misaligned non-contiguous access costs 42.7 ns against 19.1 ns.",
           f"every contiguous tensor starts on a line and misaligned reads are > {MISALIGNED_COSTLY_RATIO}x slower",
           f"misaligned reads cost <= {MISALIGNED_COSTLY_RATIO}x; 'depends' if contiguous views start mid-line",
           ("fresh_checked", "fresh_misaligned", "views_checked", "contiguous_views_misaligned",
            "aligned_ns_per_element", "misaligned_ns_per_element"),
           thresholds={"misaligned_costly_ratio": MISALIGNED_COSTLY_RATIO,
                       "cache_line_bytes": CACHE_LINE_BYTES}, check=checks.check_c5),
    _claim("C6", "02", SEED_STRIDES, "2.3 非contiguous张量的隐式开销",
           "narrow() on a transposed view triggers an implicit contiguous() copy (89.7 us against 12.3 us).",
           f"the copy detector records a copy and narrow takes > {NARROW_COSTLY_RATIO}x as long",
           "no copy is recorded and the result shares storage",
           ("copy_bytes", "shares_storage", "narrow_contiguous_median_s", "narrow_transposed_median_s"),
           thresholds={"narrow_costly_ratio": NARROW_COSTLY_RATIO}, check=checks.check_c6),
    _claim("C9", "02", SEED_STRIDES, "3.1 contiguous()调用代价量化",
           "contiguous() on a transposed 128x512x256 tensor is costly (18,420 MB/s, 2.7M DTLB misses) against a natively contiguous tensor (920 MB/s).",
           f"a full copy, free when already contiguous, > {STRIDED_PENALTY_RATIO}x slower than a plain copy of the same bytes",
           "no full copy, or a copy when already contiguous; 'depends' if it runs at a plain copy's speed",
           ("transposed_copy_bytes", "expected_bytes", "contiguous_returns_self",
            "contiguous_copy_bytes", "transposed_gbps", "plain_copy_gbps"),
           thresholds={"strided_penalty_ratio": STRIDED_PENALTY_RATIO}, check=checks.check_c9),
    _claim("C10", "02", SEED_STRIDES, "3.2 stride-aware算子设计",
           "A stride-aware kernel beats contiguous()-then-kernel (8.7 ms against 3.2 ms, 8 MB against 0 B copied).",
           f"copy-then-kernel takes > {STRIDE_AWARE_WIN_RATIO}x the stride-aware kernel's time",
           f"the ratio is <= {STRIDE_AWARE_WIN_RATIO}",
           ("kernel", "stride_aware_median_s", "contiguous_path_median_s"),
           thresholds={"stride_aware_win_ratio": STRIDE_AWARE_WIN_RATIO}, check=checks.check_c10),
    _claim("C12", "02", SEED_STRIDES, "4.1 模型前向传播瓶颈定位",
           "torch._dynamo.config.output_graph_debug shows where stride changes split the graph.",
           "the setting exists and stride-changing code breaks the graph",
           "the setting does not exist, or stride changes cause no graph break",
           ("config_exists", "graph_count", "graph_break_count"), check=checks.check_c12),
    _claim("C7", "03", SEED_STRIDES, "2.4 memory layout类型对比 (ResNet-50, batch64, FP16)",
           "channels_last raises ResNet-50 inference from 1820 to 2190 img/s (A100 fp16) and needs stride[1] == 1.",
           f"channels_last has stride[1] == 1 and NHWC/NCHW img/s > {CHANNELS_LAST_FASTER_RATIO} in every run",
           f"NHWC/NCHW <= {CHANNELS_LAST_FASTER_RATIO} in every run; 'depends' if mixed",
           ("channels_last_stride1", "runs"),
           thresholds={"channels_last_faster_ratio": CHANNELS_LAST_FASTER_RATIO}, check=checks.check_c7),
    _claim("C22", "03", SEED_PIPELINE, "4.1 Tensor内存布局重构 (cuBLAS兼容性适配)",
           "cuBLAS requires NCHW input, so NHWC must be converted (NHWC to NCHW) before the GEMM.",
           "a layout-conversion copy or kernel is recorded for the conv / channel matmul on NHWC input",
           "conv and matmul consume NHWC with no conversion copy",
           ("conv_conversion_bytes", "conversion_kernels", "conv_output_format",
            "channel_matmul_nhwc_copy_bytes", "channel_matmul_nchw_copy_bytes"), check=checks.check_c22),
    # Later chapters: registered so the ledger lists them; their chapters add the checks.
    _claim("C13", "05", SEED_PIPELINE, "4.3 Pinned memory预分配与零拷贝DMA通道绑定",
           "pin_memory_device='cuda:0' gives a zero-copy DMA path (no explicit host-to-device copy)."),
    _claim("C23", "05", SEED_PIPELINE, "4.3 Pinned memory预分配与零拷贝DMA通道绑定 (性能对比)",
           "Host-to-device bandwidth is 4.2 GB/s pageable, 12.8 pinned, 18.6 with pin_memory_device."),
    _claim("C14", "06", SEED_STRIDES, "4.3 分布式训练中的layout漂移问题",
           "DDP + channels_last + AMP 'layout drift' breaks all-reduce alignment; a full backward hook calling grad.contiguous() fixes it."),
    _claim("C15", "07", SEED_STRIDES, "4.4 JIT脚本化部署陷阱",
           "Tracing loses contiguity, so TensorRT falls back to the CPU with +320% latency."),
    _claim("C17", "04", SEED_PIPELINE, "2.1 TorchScript与TorchDynamo的底层IR差异",
           "Dynamo keeps Python control flow such as x.sum() > 0 in one graph."),
    _claim("C18", "04", SEED_PIPELINE, "2.3 CUDA Graph集成与异步启动延迟消除",
           "CUDA Graph replay launches in under 0.5 us against 5 to 8 us eager."),
    _claim("C19", "04", SEED_PIPELINE, "2.4 自定义Triton内核 (性能对比)",
           "A Triton add kernel reaches 28.9 TFLOPS against 12.4 for PyTorch."),
    _claim("C20", "04", SEED_PIPELINE, "3.2 手动融合ResNet50中Conv-BN-ReLU三元组 (参数折叠规则)",
           "Conv-BN folding: w' = gamma/sigma * w, b' = gamma/sigma * b + beta - gamma*mu/sigma."),
    _claim("C21", "04", SEED_PIPELINE, "3.3 混合精度融合中的梯度缩放",
           "GradScaler starts at 65536, grows every 2000 steps, backs off by 0.5."),
    _claim("C24", "08", SEED_PIPELINE, "第五章 端到端吞吐提升4.8倍的归因分析 (and the title: 7步实现ResNet50推理吞吐提升4.8倍)",
           "Seven steps raise ResNet-50 inference throughput 4.8x."),
]

REGISTRY: dict[str, Claim] = {c.id: c for c in _CLAIMS}


def get(claim_id: str) -> Claim:
    """The claim with this id ('C1', 'C8a', ...)."""
    try:
        return REGISTRY[claim_id]
    except KeyError:
        raise ClaimError(f"no claim {claim_id!r}; known: {', '.join(REGISTRY)}") from None


def for_chapter(chapter: str) -> list[Claim]:
    """The claims a chapter ('01', '02', ...) tests, in curriculum order."""
    return [c for c in _CLAIMS if c.chapter == chapter]


# ---------------------------------------------------------------------------------------
# Tables, saving and the recorded reference

VERDICT_COLUMNS = ("claim", "source", "statement", "this machine", "reason", "recorded reference")


@dataclass(repr=False)
class VerdictTable:
    """A chapter's verdicts, with the reference GPU's recorded verdicts beside them.

    _repr_html_ for people; structure() is deterministic text for nbval (ids and columns,
    and only the verdicts of claims marked deterministic).
    """

    verdicts: list[Verdict]
    recorded: dict[str, Verdict] = field(default_factory=dict)
    reference: str = ""
    pending: list[str] = field(default_factory=list)  # claim ids with no verdict on this machine
    recording_reference: bool = False  # this run itself writes the reference results

    def rows(self) -> list[dict]:
        """One dict per claim with the columns of VERDICT_COLUMNS."""
        out = []
        by_id = {v.claim_id: v for v in self.verdicts}
        for claim_id in [v.claim_id for v in self.verdicts] + self.pending:
            claim, verdict, ref = get(claim_id), by_id.get(claim_id), self.recorded.get(claim_id)
            out.append({
                "claim": claim_id, "source": _source(claim), "statement": claim.statement,
                "this machine": verdict.label if verdict else "needs a GPU: not measured here",
                "reason": verdict.reason if verdict else (ref.reason if ref else ""),
                "recorded reference": self._reference_text(ref),
            })
        return out

    def _reference_text(self, ref: Verdict | None) -> str:
        if self.recording_reference:
            return f"this run is the {self.reference} reference"
        if ref is None:
            return f"nothing recorded yet for {self.reference or 'the reference'}"
        return f"{ref.label} (recorded, {ref.machine})"

    def structure(self) -> str:
        """Column names and claim ids, with verdicts only where they cannot vary by machine."""
        lines = ["columns: " + " | ".join(VERDICT_COLUMNS)]
        by_id = {v.claim_id: v for v in self.verdicts}
        for claim_id in [v.claim_id for v in self.verdicts] + self.pending:
            verdict = by_id.get(claim_id)
            if verdict is None:
                shown = "no verdict here (needs a GPU)"
            elif get(claim_id).deterministic:
                shown = verdict.label
            else:
                shown = "measured (varies by machine)"
            lines.append(f"{claim_id}: {shown}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return "\n".join(f"{r['claim']:<5} {r['this machine']:<40} {r['recorded reference']}"
                         for r in self.rows())

    def __repr__(self) -> str:
        """Plain text where HTML does not render: the deterministic structure."""
        return self.structure()

    def _repr_html_(self) -> str:
        colours = {CONFIRMED: "#1a7f37", REFUTED: "#cf222e", DEPENDS: "#9a6700"}
        head = "".join(f"<th style='text-align:left'>{html.escape(c)}</th>" for c in VERDICT_COLUMNS)
        body = ""
        for row in self.rows():
            cells = ""
            for column in VERDICT_COLUMNS:
                text = str(row[column])
                colour = next((c for o, c in colours.items() if text.startswith(o)), None)
                style = f" style='text-align:left;color:{colour};font-weight:bold'" if colour \
                    else " style='text-align:left'"
                cells += f"<td{style}>{html.escape(text)}</td>"
            body += f"<tr>{cells}</tr>"
        return f"<table><tr>{head}</tr>{body}</table>"


def table(verdicts: Iterable[Verdict], pending: Iterable[str] = (),
          reference: str = "nvidia-h200") -> VerdictTable:
    """The verdict table of these verdicts, beside the reference machine's recorded ones.

    pending: ids of claims that got no verdict on this machine (GPU-only forms); their
    recorded verdicts are still shown.
    """
    verdicts = list(verdicts)
    ids = [v.claim_id for v in verdicts] + list(pending)
    recording = os.environ.get(results.REFERENCE_ENV, "").strip() == reference
    return VerdictTable(verdicts, {} if recording else recorded_verdicts(ids, reference),
                        reference, list(pending), recording)


def _source(claim: Claim) -> str:
    """'000 §2.1 stride机制详解': which seed (by number) and which section."""
    return f"{claim.seed.split('/')[-1][:3]} §{claim.section}"


LEDGER_COLUMNS = ("claim", "chapter", "source", "statement", "this machine", "reference")


@dataclass(repr=False)
class Ledger:
    """Every claim of the curriculum with its saved verdicts: this machine's and the reference's."""

    mine: dict[str, Verdict]
    reference_verdicts: dict[str, Verdict]
    reference: str

    def rows(self) -> list[dict]:
        """One dict per registered claim, in curriculum order, with LEDGER_COLUMNS."""
        out = []
        for claim in _CLAIMS:
            if not claim.tested:
                here = there = "not yet tested"
            else:
                here = self.mine[claim.id].label if claim.id in self.mine else "not run here yet"
                there = (self.reference_verdicts[claim.id].label
                         if claim.id in self.reference_verdicts else "nothing recorded yet")
            out.append({"claim": claim.id, "chapter": claim.chapter, "source": _source(claim),
                        "statement": claim.statement, "this machine": here, "reference": there})
        return out

    def structure(self) -> str:
        """Deterministic text for nbval: columns, then each claim id with its chapter."""
        return "\n".join(["columns: " + " | ".join(LEDGER_COLUMNS)]
                         + [f"{c.id}: chapter {c.chapter}, {'tested' if c.tested else 'not yet tested'}"
                            for c in _CLAIMS])

    def __repr__(self) -> str:
        return self.structure()

    def _repr_html_(self) -> str:
        head = "".join(f"<th style='text-align:left'>{html.escape(c)}</th>" for c in LEDGER_COLUMNS)
        body = "".join("<tr>" + "".join(f"<td style='text-align:left'>{html.escape(str(r[c]))}</td>"
                                        for c in LEDGER_COLUMNS) + "</tr>" for r in self.rows())
        return (f"<table><caption>reference: {html.escape(self.reference)}</caption>"
                f"<tr>{head}</tr>{body}</table>")


def ledger(reference: str = "nvidia-h200") -> Ledger:
    """The claims ledger from saved results: this machine's verdicts beside the reference's."""
    return Ledger(saved_verdicts(None), saved_verdicts(reference), reference)


VERDICT_KEY_PREFIX = "verdict:"  # results key of a claim's verdict: "verdict:C2"


def save(verdicts: Iterable[Verdict], chapter: str) -> None:
    """Save a chapter's verdicts with their evidence through labkit.results.

    They go to this machine's results file, or to results/<machine>.json when
    LABKIT_RECORD_REFERENCE=<machine> is set (how the reference GPU run is recorded).
    """
    for verdict in verdicts:
        results.record(chapter, VERDICT_KEY_PREFIX + verdict.claim_id, verdict.to_dict())


def saved_verdicts(machine: str | None = None) -> dict[str, Verdict]:
    """Every verdict saved in a results file: a reference machine's, or this machine's (None).

    The claims ledger reads this; verdicts from a reference file are marked recorded.
    """
    data = results.load(machine) or {}
    found: dict[str, Verdict] = {}
    for entries in data.get("chapters", {}).values():
        for key, entry in entries.items():
            if key.startswith(VERDICT_KEY_PREFIX):
                verdict = Verdict.from_dict(entry["payload"], recorded=machine is not None)
                found[verdict.claim_id] = verdict
    return found


def recorded_verdicts(claim_ids: Iterable[str], reference: str = "nvidia-h200") -> dict[str, Verdict]:
    """The reference machine's recorded verdicts for these claims (missing ones left out)."""
    wanted = set(claim_ids)
    return {k: v for k, v in saved_verdicts(reference).items() if k in wanted}


def recorded(claim_id: str, reference: str = "nvidia-h200") -> Verdict | None:
    """One recorded reference verdict, or None when nothing is recorded yet."""
    return recorded_verdicts([claim_id], reference).get(claim_id)


@dataclass(repr=False)
class RecordedEvidence:
    """The reference machine's recorded verdicts with their evidence, labelled as recorded."""

    claim_ids: list[str]
    found: dict[str, Verdict]
    reference: str

    def lines(self) -> list[str]:
        """One line per claim: the recorded verdict and reason, or that nothing is recorded."""
        out = []
        for claim_id in self.claim_ids:
            verdict = self.found.get(claim_id)
            out.append(f"{claim_id} on {self.reference} (recorded): {verdict.label} -- {verdict.reason}"
                       if verdict else f"{claim_id}: nothing recorded yet for {self.reference}")
        return out

    def __repr__(self) -> str:
        return "\n".join(self.lines())

    def _repr_html_(self) -> str:
        parts = []
        for claim_id, line in zip(self.claim_ids, self.lines(), strict=True):
            verdict = self.found.get(claim_id)
            evidence = "" if verdict is None else (
                "<details><summary>recorded evidence</summary><pre>"
                + html.escape(json.dumps(results.to_jsonable(verdict.evidence), indent=1,
                                         ensure_ascii=False)) + "</pre></details>")
            parts.append(f"<div><b>{html.escape(line)}</b>{evidence}</div>")
        return "".join(parts)


def recorded_evidence(claim_ids: Iterable[str], reference: str = "nvidia-h200") -> RecordedEvidence:
    """What the reference GPU recorded for these claims, to show where this machine cannot run
    the claim's own (GPU) form."""
    ids = list(claim_ids)
    return RecordedEvidence(ids, recorded_verdicts(ids, reference), reference)
