"""Decision-model throughput on the bundled model: batched scoring vs a plain prompt vs one request per candidate.

    python benchmarks/product/decision.py                 # human-readable
    python benchmarks/product/decision.py --json          # one JSON object
    python benchmarks/product/decision.py --candidates 50 --per-candidate 10 --repeat 3 --threads 2

For binary mode and for likelihood mode, over N candidates of ~30 tokens and a query:
  (a) the mode itself, cold (empty cache);
  (b) the same number of tokens evaluated as one plain prompt: the throughput ceiling (for likelihood also a
      plain prompt with as many logit rows as the mode reads, since every read row costs an output-layer pass);
  (c) one request per candidate, each from an empty cache: run on a subset and extrapolated to N (said so);
  (d) a second query over the same listing/candidates, re-using the kept prefix / cached candidate states.
And for the relevance judge (``core/models/encoders/cross_encoder.py``, a cross-encoder GGUF): pairs/s scoring the
query against the N candidates (tokenization included), beside llama.cpp's raw throughput on exactly the same token
sequences and batch layout (plain mean-pooled embedding through the embedder path): ``judge_vs_raw`` (target >= 0.8).
``--only judge`` skips the generative model.
Seconds are the minimum over ``--repeat`` runs; the load average is printed. On a shared machine wall-clock
ratios are noise: run with ``--threads 1`` and read the ``*_cpu`` ratios (process CPU seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shelfwise.core.models.backend import Cost
from shelfwise.core.models.llama.backend import LlamaBackend
from shelfwise.core.models.prompts import item_question, likelihood_query, listing_context

SUBJECTS = [
    "meal allowances on business trips",
    "parental leave",
    "printer toner orders",
    "performance reviews",
    "remote work equipment",
    "health insurance enrolment",
    "pension contributions",
    "company cars",
    "privacy training",
    "fire drills",
    "onboarding",
    "sick leave",
    "overtime pay",
    "training budgets",
    "expense cards",
    "visa sponsorship",
    "relocation help",
    "laptop replacement",
    "password rules",
    "public holidays",
    "bicycle leasing",
    "canteen hours",
    "parking permits",
    "whistleblowing",
    "conflicts of interest",
    "gifts and hospitality",
    "travel booking",
    "phone allowances",
    "home office tax",
    "maternity pay",
    "paternity pay",
    "sabbaticals",
    "flexible hours",
    "dress code",
    "internal vacancies",
    "referral bonuses",
    "salary bands",
    "bonus dates",
    "stock options",
    "counselling support",
    "first aid",
    "accident reports",
    "meeting rooms",
    "visitor badges",
    "records retention",
    "confidential printing",
    "software licences",
    "cloud storage",
    "email retention",
    "social media",
]
QUERY = "How much can I claim for dinner when I travel for work?"
QUERY2 = "When is the yearly bonus paid out to employees?"


def candidates(n: int) -> list[str]:
    """``n`` distinct passages of about 30 tokens."""
    out = []
    for i in range(n):
        s = SUBJECTS[i % len(SUBJECTS)]
        out.append(
            f"Section {i + 1} covers {s}: who is eligible, which form to fill in, the deadline for requests, "
            f"and whom to contact in human resources about {s}."
        )
    return out


@dataclass
class Measure:
    """The fastest of several runs: tokens, requests, reused tokens, wall seconds and process CPU seconds."""

    cost: Cost
    cpu: float

    def as_dict(self) -> dict[str, Any]:
        return {**vars(self.cost), "cpu_seconds": self.cpu}


def timed(call: Callable[[], Cost]) -> Measure:
    t = time.process_time()
    cost = call()
    return Measure(cost, time.process_time() - t)


def best(fn: Callable[[], Measure], repeat: int) -> Measure:
    runs = [fn() for _ in range(repeat)]
    fastest = min(runs, key=lambda m: m.cost.seconds)
    return Measure(fastest.cost, min(m.cpu for m in runs))


def rate(m: Measure, cpu: bool = False) -> float:
    s = m.cpu if cpu else m.cost.seconds
    return m.cost.tokens / s if s > 0 else 0.0


def run(args: argparse.Namespace) -> dict[str, Any]:
    be = LlamaBackend(args.model, n_threads=args.threads)
    items = candidates(args.candidates)
    questions = [item_question(i) for i in range(len(items))]
    ctx1, ctx2 = listing_context(items, QUERY), listing_context(items, QUERY2)
    sub = min(args.per_candidate, len(items))
    r: dict[str, Any] = {
        "model": be.info()["model"],
        "threads": be.n_threads,
        "candidates": len(items),
        "candidate_tokens_mean": sum(be.count_tokens(t) for t in items) / len(items),
        "load_average_start": os.getloadavg()[0],
    }

    def cold(call: Callable[[], Cost]) -> Callable[[], Measure]:
        def fn() -> Measure:
            be.reset()
            return timed(call)

        return fn

    def per_candidate(call: Callable[[int], Cost]) -> Callable[[], Measure]:
        def fn() -> Measure:
            total, cpu = Cost(), 0.0
            for i in range(sub):
                be.reset()
                m = timed(lambda i=i: call(i))
                total.add(m.cost)
                cpu += m.cpu
            return Measure(total, cpu)

        return fn

    def warm(first: Callable[[], Cost], second: Callable[[], Cost]) -> Callable[[], Measure]:
        def fn() -> Measure:
            be.reset()
            first()
            return timed(second)

        return fn

    def summarise(
        name: str, a: Measure, b: Measure, c: Measure, d: Measure, extra: dict[str, Measure]
    ) -> None:
        scale = len(items) / sub
        r[name] = {
            "mode": a.as_dict(),
            "ceiling": b.as_dict(),
            **{k: m.as_dict() for k, m in extra.items()},
            f"per_candidate_{sub}_of_{len(items)}": c.as_dict(),
            "per_candidate_extrapolated_seconds": c.cost.seconds * scale,
            "second_query": d.as_dict(),
        }
        r[f"{name}_vs_ceiling"] = rate(a) / rate(b)
        r[f"{name}_vs_ceiling_cpu"] = rate(a, True) / rate(b, True)
        for k, m in extra.items():
            r[f"{name}_vs_{k}"] = rate(a) / rate(m)
            r[f"{name}_vs_{k}_cpu"] = rate(a, True) / rate(m, True)
        r[f"{name}_speedup_vs_per_candidate"] = c.cost.seconds * scale / a.cost.seconds
        r[f"{name}_speedup_vs_per_candidate_cpu"] = c.cpu * scale / a.cpu
        r[f"{name}_reuse_token_fraction"] = d.cost.tokens / a.cost.tokens
        r[f"{name}_second_query_seconds_fraction"] = d.cost.seconds / a.cost.seconds

    # ---------------- binary
    a = best(cold(lambda: be.binary(ctx1, questions).cost), args.repeat)
    plain = be.tokenize(ctx1, add_bos=True) + [t for q in questions for t in be.tokenize(q)]
    b = best(lambda: timed(lambda: be.prompt_eval(plain[: a.cost.tokens])), args.repeat)
    c = best(per_candidate(lambda i: be.binary(ctx1, [questions[i]]).cost), 1)
    d = best(
        warm(lambda: be.binary(ctx1, questions).cost, lambda: be.binary(ctx2, questions).cost), args.repeat
    )
    summarise("binary", a, b, c, d, {})
    r["reuse_token_fraction"] = r.pop("binary_reuse_token_fraction")

    # ---------------- likelihood
    lctx = "Passages from the staff handbook:"
    cands = ["\n" + t for t in items]
    lq1, lq2 = likelihood_query(QUERY), likelihood_query(QUERY2)
    n_q = be.count_tokens(lq1)
    la = best(cold(lambda: be.likelihood(lctx, cands, lq1).cost), args.repeat)
    lplain = be.tokenize(lctx, add_bos=True) + [t for x in cands for t in be.tokenize(x + lq1)]
    lb = best(lambda: timed(lambda: be.prompt_eval(lplain[: la.cost.tokens])), args.repeat)
    rows = n_q * len(cands)
    lbo = best(lambda: timed(lambda: be.prompt_eval(lplain[: la.cost.tokens], outputs=rows)), args.repeat)
    lc = best(per_candidate(lambda i: be.likelihood(lctx, [cands[i]], lq1).cost), 1)
    ld = best(
        warm(lambda: be.likelihood(lctx, cands, lq1).cost, lambda: be.likelihood(lctx, cands, lq2).cost),
        args.repeat,
    )
    summarise("likelihood", la, lb, lc, ld, {"ceiling_same_logit_rows": lbo})
    r["likelihood"].update(query_tokens=n_q, logit_rows=rows)
    r["per_candidate_note"] = f"one request per candidate measured on {sub} of {len(items)}, extrapolated"
    r["load_average_end"] = os.getloadavg()[0]
    be.close()
    return r


def run_judge(args: argparse.Namespace) -> dict[str, Any]:
    from shelfwise.core.models.encoders.cross_encoder import Judge
    from shelfwise.core.models.encoders.embedder import Embedder

    judge = Judge(args.judge, n_threads=args.threads)
    raw = Embedder(judge.path, n_threads=judge.n_threads, window=judge.frame.pair_tokens,
                   batch_tokens=judge.batch_tokens, max_seqs=judge.max_seqs)
    items = candidates(args.candidates)
    seqs = judge.pairs(QUERY, items)
    n_tok = sum(len(s) for s in seqs)

    def judge_once() -> Measure:
        t, c = time.perf_counter(), time.process_time()
        judge.score(QUERY, items)
        return Measure(Cost(tokens=n_tok, seconds=time.perf_counter() - t, requests=1), time.process_time() - c)

    def raw_once() -> Measure:
        t, c = time.perf_counter(), time.process_time()
        raw.encode_tokens(seqs)  # same packing rule (llama_encoder.pack) as the judge: same batches
        return Measure(Cost(tokens=n_tok, seconds=time.perf_counter() - t, requests=1), time.process_time() - c)

    judge_once()  # warm-up (first graph allocation)
    j = best(judge_once, args.repeat)
    b = best(raw_once, args.repeat)
    r = {
        "judge_model": judge.path.name,
        "judge_threads": judge.n_threads,
        "judge_pairs": len(seqs),
        "judge_pair_tokens_mean": n_tok / len(seqs),
        "judge": j.as_dict(),
        "judge_raw_same_tokens": b.as_dict(),
        "judge_pairs_per_s": len(seqs) / j.cost.seconds,
        "judge_raw_pairs_per_s": len(seqs) / b.cost.seconds,
        "judge_vs_raw": b.cost.seconds / j.cost.seconds,
        "judge_vs_raw_cpu": b.cpu / j.cpu if j.cpu > 0 else 0.0,
    }
    raw.close()
    judge.close()
    return r


def report(r: dict[str, Any]) -> str:
    lines = []
    if "judge" in r:
        lines.append(
            f"judge {r['judge_model']} ({r['judge_threads']} threads): {r['judge_pairs']} pairs of "
            f"~{r['judge_pair_tokens_mean']:.0f} tokens: {r['judge_pairs_per_s']:.1f} pairs/s; raw llama.cpp on the "
            f"same tokens {r['judge_raw_pairs_per_s']:.1f} pairs/s; ratio {r['judge_vs_raw']:.3f} "
            f"(cpu {r['judge_vs_raw_cpu']:.3f})"
        )
    if "model" not in r:
        return "\n".join(lines)
    lines += [
        (
            f"{r['model']}, {r['threads']} threads, {r['candidates']} candidates of "
            f"~{r['candidate_tokens_mean']:.0f} tokens (load average {r['load_average_start']:.1f} -> "
            f"{r['load_average_end']:.1f}); wall seconds, [process CPU seconds]"
        )
    ]
    for mode in ("binary", "likelihood"):
        m = r[mode]
        lines.append(f"\n{mode}:")
        for key, label in (
            ("mode", "(a) batched, cold"),
            ("ceiling", "(b) plain prompt, same tokens"),
            ("ceiling_same_logit_rows", "(b') plain prompt, same logit rows"),
            ("second_query", "(d) second query, reuse"),
        ):
            if key in m:
                c = m[key]
                lines.append(
                    f"  {label:36s} {c['tokens']:6d} tokens {c['seconds']:7.2f} s [{c['cpu_seconds']:7.2f}] "
                    f"{c['tokens'] / max(c['seconds'], 1e-9):6.0f} tok/s  requests {c['requests']}  "
                    f"reused {c['reused_tokens']}"
                )
        pc = next(k for k in m if k.startswith("per_candidate_") and not k.endswith("seconds"))
        c = m[pc]
        lines.append(
            f"  (c) one request per candidate, {pc[14:].replace('_', ' ')}: {c['tokens']} tokens "
            f"{c['seconds']:.2f} s [{c['cpu_seconds']:.2f}] -> {m['per_candidate_extrapolated_seconds']:.1f} s "
            "extrapolated to all"
        )
    lines.append("\nratios (wall clock, and on CPU seconds: steadier on a shared machine with --threads 1):")
    for key in (
        "binary_vs_ceiling",
        "binary_speedup_vs_per_candidate",
        "likelihood_vs_ceiling",
        "likelihood_vs_ceiling_same_logit_rows",
        "likelihood_speedup_vs_per_candidate",
    ):
        lines.append(f"  {key:40s} {r[key]:7.3f}   cpu {r[key + '_cpu']:7.3f}")
    for key in (
        "reuse_token_fraction",
        "binary_second_query_seconds_fraction",
        "likelihood_reuse_token_fraction",
        "likelihood_second_query_seconds_fraction",
    ):
        lines.append(f"  {key:40s} {r[key]:7.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="a GGUF file (default: the bundled model)")
    ap.add_argument("--candidates", type=int, default=50)
    ap.add_argument("--per-candidate", type=int, default=10, help="candidates timed one request each")
    ap.add_argument("--repeat", type=int, default=2, help="runs per measurement; the fastest is kept")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--judge", default=None, help="judge GGUF (default: the shipped one)")
    ap.add_argument("--only", choices=("all", "judge", "generative"), default="all")
    args = ap.parse_args(argv)
    r: dict[str, Any] = {}
    if args.only != "judge":
        r.update(run(args))
    if args.only != "generative":
        r.update(run_judge(args))
    print(json.dumps(r, indent=1) if args.json else report(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
