"""Decision-model throughput on the bundled model: batched scoring vs a plain prompt vs one request per candidate.

    python benchmarks/decision.py                 # human-readable
    python benchmarks/decision.py --json          # one JSON object
    python benchmarks/decision.py --candidates 50 --per-candidate 10 --repeat 3 --threads 2

For binary mode and for likelihood mode, over N candidates of ~30 tokens and a query:
  (a) the mode itself, cold (empty cache);
  (b) the same number of tokens evaluated as one plain prompt: the throughput ceiling (for likelihood also a
      plain prompt with as many logit rows as the mode reads, since every read row costs an output-layer pass);
  (c) one request per candidate, each from an empty cache: run on a subset and extrapolated to N (said so);
  (d) a second query over the same listing/candidates, re-using the kept prefix / cached candidate states.
Seconds are the minimum over ``--repeat`` runs (the machine may be shared); the load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from shelfwise.core.backend import Cost
from shelfwise.core.llama_backend import LlamaBackend
from shelfwise.core.prompts import item_question, likelihood_query, listing_context

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


def best(fn: Callable[[], Cost], repeat: int) -> Cost:
    runs = [fn() for _ in range(repeat)]
    return min(runs, key=lambda c: c.seconds)


def rate(c: Cost) -> float:
    return c.tokens / c.seconds if c.seconds > 0 else 0.0


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

    # ---------------- binary
    def binary_cold() -> Cost:
        be.reset()
        return be.binary(ctx1, questions).cost

    def per_candidate_binary() -> Cost:
        total = Cost()
        for i in range(sub):
            be.reset()
            total.add(be.binary(ctx1, [questions[i]]).cost)
        return total

    def binary_warm() -> Cost:
        be.reset()
        be.binary(ctx1, questions)
        return be.binary(ctx2, questions).cost

    a = best(binary_cold, args.repeat)
    plain = be.tokenize(ctx1, add_bos=True) + [t for q in questions for t in be.tokenize(q)]
    b = best(lambda: be.prompt_eval(plain[: a.tokens]), args.repeat)
    c = best(per_candidate_binary, 1)
    d = best(binary_warm, args.repeat)
    per_cand_s = c.seconds / sub * len(items)
    r["binary"] = {
        "mode": vars(a),
        "ceiling": vars(b),
        f"per_candidate_{sub}_of_{len(items)}": vars(c),
        "per_candidate_extrapolated_seconds": per_cand_s,
        "second_query": vars(d),
    }
    r["binary_vs_ceiling"] = rate(a) / rate(b)
    r["binary_speedup_vs_per_candidate"] = per_cand_s / a.seconds
    r["reuse_token_fraction"] = d.tokens / a.tokens
    r["binary_second_query_seconds_fraction"] = d.seconds / a.seconds

    # ---------------- likelihood
    lctx = "Passages from the staff handbook:"
    cands = ["\n" + t for t in items]

    def lik_cold() -> Cost:
        be.reset()
        return be.likelihood(lctx, cands, likelihood_query(QUERY)).cost

    def per_candidate_lik() -> Cost:
        total = Cost()
        for i in range(sub):
            be.reset()
            total.add(be.likelihood(lctx, [cands[i]], likelihood_query(QUERY)).cost)
        return total

    def lik_warm() -> Cost:
        be.reset()
        be.likelihood(lctx, cands, likelihood_query(QUERY))
        return be.likelihood(lctx, cands, likelihood_query(QUERY2)).cost

    n_q = be.count_tokens(likelihood_query(QUERY))
    la = best(lik_cold, args.repeat)
    lplain = be.tokenize(lctx, add_bos=True) + [
        t for x in cands for t in be.tokenize(x + likelihood_query(QUERY))
    ]
    lb = best(lambda: be.prompt_eval(lplain[: la.tokens]), args.repeat)
    lbo = best(lambda: be.prompt_eval(lplain[: la.tokens], outputs=n_q * len(cands)), args.repeat)
    lc = best(per_candidate_lik, 1)
    ld = best(lik_warm, args.repeat)
    lper_cand_s = lc.seconds / sub * len(items)
    r["likelihood"] = {
        "mode": vars(la),
        "ceiling": vars(lb),
        "ceiling_same_logit_rows": vars(lbo),
        f"per_candidate_{sub}_of_{len(items)}": vars(lc),
        "per_candidate_extrapolated_seconds": lper_cand_s,
        "second_query": vars(ld),
        "query_tokens": n_q,
        "logit_rows": n_q * len(cands),
    }
    r["likelihood_vs_ceiling"] = rate(la) / rate(lb)
    r["likelihood_vs_ceiling_same_logit_rows"] = rate(la) / rate(lbo)
    r["likelihood_speedup_vs_per_candidate"] = lper_cand_s / la.seconds
    r["likelihood_reuse_token_fraction"] = ld.tokens / la.tokens
    r["likelihood_second_query_seconds_fraction"] = ld.seconds / la.seconds
    r["per_candidate_note"] = f"one request per candidate measured on {sub} of {len(items)}, extrapolated"
    r["load_average_end"] = os.getloadavg()[0]
    be.close()
    return r


def report(r: dict[str, Any]) -> str:
    lines = [
        (
            f"{r['model']}, {r['threads']} threads, {r['candidates']} candidates of "
            f"~{r['candidate_tokens_mean']:.0f} tokens (load average {r['load_average_start']:.1f} -> "
            f"{r['load_average_end']:.1f})"
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
                    f"  {label:36s} {c['tokens']:6d} tokens {c['seconds']:7.2f} s "
                    f"{c['tokens'] / max(c['seconds'], 1e-9):7.0f} tok/s  reused {c['reused_tokens']}"
                )
        pc = next(
            k for k in m if k.startswith("per_candidate_") and k != "per_candidate_extrapolated_seconds"
        )
        c = m[pc]
        lines.append(
            f"  (c) one request per candidate ({pc[14:].replace('_', ' ')}): {c['tokens']} tokens "
            f"{c['seconds']:.2f} s -> extrapolated {m['per_candidate_extrapolated_seconds']:.1f} s"
        )
    lines.append("")
    for key in (
        "binary_vs_ceiling",
        "binary_speedup_vs_per_candidate",
        "reuse_token_fraction",
        "binary_second_query_seconds_fraction",
        "likelihood_vs_ceiling",
        "likelihood_vs_ceiling_same_logit_rows",
        "likelihood_speedup_vs_per_candidate",
        "likelihood_reuse_token_fraction",
        "likelihood_second_query_seconds_fraction",
    ):
        lines.append(f"  {key:42s} {r[key]:.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="a GGUF file (default: the bundled model)")
    ap.add_argument("--candidates", type=int, default=50)
    ap.add_argument("--per-candidate", type=int, default=10, help="candidates timed one request each")
    ap.add_argument("--repeat", type=int, default=2, help="runs per measurement; the fastest is kept")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    r = run(args)
    print(json.dumps(r, indent=1) if args.json else report(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
