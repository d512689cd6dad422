"""A learned ranker of the phrases offered for a question asking for a thing (issue 48, session 28), fitted and graded
on the TRAINING data only, held out by document; NOT in the product (docs/eval/answers.md, "Session 28": it did not
beat the code's ranker where the answer model reads the phrases, and without the model it won only by choosing
longer phrases that contain the gold).

The features (:func:`phrase_features`, 41 a phrase), in the spirit of the pre-neural SQuAD baselines: the hand-set
ranker's own features and score (``short.nominal_features``, ``SpanWeights``), the answer model's reading where it
read (per token, summed, against the sentence's best), the phrase's make (length, capitals, digits, a date, a clause,
a parenthesis, an article first), its overlap with the question's words, where it stands (position, the distance in
words to the nearest question word and on which side, question words within three words of it), whether the noun the
question asks about ("which *team*") stands in or right after it, whether the word before the wh-word stands before
it ("beat which team": "beat [the Broncos]"), against the kind asked.

The items: COVID-QA and ConditionalQA TRAIN questions asking for a thing (``short.asked_kind``: thing, name, place,
list) with a gold of at most 5 words, asked of the sentence holding the gold ("gold"), and session 26's stand-in
walk items (the sentences the walk shows, "walk"); each row holds the code's candidates in its order (the answer
model's readings from caches), labelled by whether each holds the gold (SQuAD's test). The model: a conditional logit
over each row's candidates (L2 on standardized features); held out: the documents split in two halves by a hash
(salted: several splits), each half graded by the model fitted on the other.

    R=/work/s28/answers; P="nice -n 19 .venv/bin/python benchmarks/research/phrase_rank_fit.py"
    $P rows $R/rows.json --walk /work/s26/answers/walk-items.json --caches $R/readings-span.pkl $R/readings-walk.pkl
    $P heldout $R/rows.json --salts 5 [--read] [--length-penalty 0.5]     # learned vs the code, five splits
    $P fit $R/rows.json [--fold 0 1] > COEF.json                           # the plain model's coefficients
    $P product --walk /work/s26/answers/walk-items.json --coef C0.json C1.json --scale 2   # the product's path, gated
    $P replay --scale 2 COEF.json -- ROWS --dataset squad --out OUT.json   # short_replay.py with the learned ranker
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import itertools
import json
import math
import re
import sys
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from short_tune import MAX_GOLD_WORDS, TRAIN, cqa_span_questions, gold_sentence, right

from shelfwise.core.answers.extractive import focus_question
from shelfwise.core.answers.matching import answer_matches
from shelfwise.core.answers.phrases import ARTICLES, is_clause
from shelfwise.core.answers.short import WEIGHTS, _stem, asked_kind, stems, value_candidates
from shelfwise.core.answers.typed_spans import Span, date_spans
from shelfwise.core.answers.types import Extracted

NOMINAL = ("thing", "name", "place", "list")
_WORD = re.compile(r"[^\W_][\w'’-]*")
_WH = re.compile(r"\b(?:what|which|who|whom|whose|where|was|welche[rsnm]?|wer|wen|wem|wessen|wo|que|quoi|"
                 r"quel(?:le)?s?|qui|où|lequel|laquelle)\b", re.I)
_WHICH = re.compile(r"(?:what|which|welche[rsnm]?|quel(?:le)?s?|lequel|laquelle)", re.I)  # followed by a noun
_WHO = re.compile(r"\b(?:who|whom|whose|wer|wen|wem|wessen|qui)\b", re.I)
_AUX = frozenset("""is are was were do does did has have had can could will would should may might must be been
the a an of ist sind war waren wird werden hat haben est sont a ont le la les un une des du de der die das den dem
des ein eine""".split())
NAMES = ("close", "typed", "capitals", "length", "after", "before", "lone", "ranker", "read", "read_mean",
         "read_sum", "read_lead", "read_best", "clause", "log_words", "q_share", "q_any", "digit", "date",
         "cap_share", "cap_first", "acronym", "paren", "article", "position", "first", "near", "near_left",
         "left3", "right3", "head_in", "head_after", "wh_before", "cap_name", "cap_who", "cap_thing", "list_kind",
         "place_kind", "name_kind", "log_offered", "ranker_lead")
READ = ("read", "read_mean", "read_sum", "read_lead", "read_best")


def _asked_words(question: str) -> tuple[str, str]:
    """The noun after a "which"/"what" ("which *team*"; auxiliaries and articles skipped) and the content word right
    before the wh-word ("The Broncos *beat* which team?"), stemmed ("" where none)."""
    m = _WH.search(question)
    if not m:
        return "", ""
    after = [w for w in _WORD.findall(question[m.end():])[:3] if w.lower() not in _AUX] \
        if _WHICH.fullmatch(m.group(0)) else []
    before = [w for w in _WORD.findall(question[: m.start()])[-2:] if w.lower() not in _AUX]
    return (_stem(after[0].lower()) if after else "", _stem(before[-1].lower()) if before else "")


def phrase_features(kind: str, question: str, text: str, offered: Sequence[tuple[Span, Sequence[float]]],
                    reads: Sequence[tuple[float, float] | None], ranker: Sequence[float],
                    q_stems: set[str]) -> list[tuple[float, ...]]:
    """One vector (in the order of :data:`NAMES`) per phrase of one sentence: ``offered`` (span, the
    ``nominal_features``), the model's (summed, per-token) reading of each (None: not read) and the hand-set
    ranker's score of each (without the reading)."""
    tokens = [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(text)]
    token_stems = [_stem(t[2].lower()) for t in tokens]
    at_q = [i for i, s in enumerate(token_stems) if s in q_stems and len(s) > 2]
    head, wh_before = _asked_words(question)
    means = [r[1] for r in reads if r is not None]
    best_mean, best_rank = (max(means) if means else 0.0), (max(ranker) if ranker else 0.0)
    who = bool(_WHO.search(question))
    out = []
    for (span, f), read, rank in zip(offered, reads, ranker, strict=True):
        inside = [i for i, t in enumerate(tokens) if span.start <= t[0] < span.end]
        words = [tokens[i][2] for i in inside] or text[span.start:span.end].split()
        first_i, last_i = (inside[0], inside[-1]) if inside else (0, 0)
        stems_in = [token_stems[i] for i in inside]
        held = [s for s in stems_in if s in q_stems]
        caps = sum(w[:1].isupper() for w in words) / max(len(words), 1)
        outside = [i for i in at_q if i < first_i or i > last_i]
        gaps = [(first_i - i if i < first_i else i - last_i) for i in outside]
        near = min(gaps) if gaps else 30
        piece = text[span.start:span.end]
        mean = read[1] if read is not None else 0.0
        out.append((*f, rank, float(read is not None), max(mean, -10.0),
                    max(read[0], -40.0) / 10.0 if read is not None else 0.0,
                    max(mean - best_mean, -10.0) if read is not None else 0.0,
                    float(read is not None and mean >= best_mean), float(is_clause(piece)),
                    math.log(len(words) + 1), len(held) / max(len(stems_in), 1), float(bool(held)),
                    float(bool(re.search(r"\d", piece))), float(bool(date_spans(piece))), caps,
                    float(words[0][:1].isupper()) if words else 0.0,
                    float(any(len(w) > 1 and w.isupper() for w in words)), float("(" in piece),
                    float(bool(words) and words[0].lower() in ARTICLES),
                    first_i / max(len(tokens), 1), float(span.start == min(s.start for s, _ in offered)),
                    math.log1p(near), float(bool(gaps) and outside[gaps.index(near)] < first_i),
                    float(sum(1 for i in outside if 0 < first_i - i <= 3)),
                    float(sum(1 for i in outside if 0 < i - last_i <= 3)),
                    float(bool(head) and head in stems_in),
                    float(bool(head) and head in token_stems[last_i + 1: last_i + 3]),
                    float(bool(wh_before) and wh_before in token_stems[max(0, first_i - 3): first_i]),
                    caps * (kind in ("name", "place")), caps * who, caps * (kind == "thing"),
                    float(kind == "list"), float(kind == "place"), float(kind == "name"),
                    math.log(len(offered)), rank - best_rank))
    return out


def _by_sentence(kind: str, question: str, cands: Sequence[Any], read: bool) -> dict[int, tuple[float, ...]]:
    """Each ranked candidate's features (by ``id``), computed per sentence as the product would."""
    w, q_stems, out = WEIGHTS.vector(), stems(focus_question(question)), {}
    groups: dict[int, list[Any]] = {}
    for c in cands:
        if c.ranked:
            groups.setdefault(c.rank, []).append(c)
    for group in groups.values():
        group.sort(key=lambda c: (c.span.start, c.span.end))
        ranker = [sum(a * b for a, b in zip(w, c.features, strict=True)) for c in group]
        vectors = phrase_features(kind, question, group[0].sentence.text, [(c.span, c.features) for c in group],
                                  [c.model if read else None for c in group], ranker, q_stems)
        out.update({id(c): v for c, v in zip(group, vectors, strict=True)})
    return out


# --------------------------------------------------------------------------- items and rows
def gold_items() -> Any:
    """(set, question, [the sentence holding the gold], gold, document key) of COVID-QA and ConditionalQA TRAIN."""
    raw = json.loads((TRAIN / "covidqa" / "original" / "200423_covidQA.json").read_text(encoding="utf-8"))
    for article in raw["data"]:
        for para in article["paragraphs"]:
            ctx, key = para["context"], f"covidqa:{para['document_id']}"
            bounds = [0, *(m.end() for m in re.finditer(r"(?<=[.!?])\s+(?=[A-Z0-9(\"])|\n+", ctx)), len(ctx)]
            for qa in para["qas"]:
                text = qa["answers"][0]["text"]
                at = ctx.find(text)
                if at < 0 or len(text.split()) > MAX_GOLD_WORDS:
                    continue
                a, b = next((a, b) for a, b in itertools.pairwise(bounds) if a <= at < b)
                s = ctx[a:b].strip()
                if len(s) < 600:
                    yield "covidqa", qa["question"].strip(), [Extracted(s, 1, 0, len(s), 1.0)], text.strip(), key
    for x, question, gold, texts in cqa_span_questions():
        s = gold_sentence(texts, gold)
        if s is not None:
            yield "conditionalqa", question, [Extracted(s, 1, 0, len(s), 1.0)], gold, f"cqa:{x['url']}"


def walk_items(path: Path) -> Any:
    from short_show import _extracted

    for it in json.loads(path.read_text()):
        if not it.get("yes_no"):
            key = ("covidqa:" if it["set"] == "covidqa" else "cqa:") + str(it["doc"])
            yield it["set"], it["question"], _extracted(it), it["gold"], key, it


def build_rows(source: str, items: Any, model: Any) -> list[dict[str, Any]]:
    rows = []
    for sset, q, sents, g, key, *_ in items:
        kind = asked_kind(q)
        if kind not in NOMINAL or not sents:
            continue
        cands = [c for c in value_candidates(kind, q, sents, model=model) if c.ranked]
        if not cands:
            continue
        fr, fp = _by_sentence(kind, q, cands, True), _by_sentence(kind, q, cands, False)
        rows.append({"source": source, "set": sset, "question": q, "gold": g, "doc": key, "kind": kind, "cands": [
            {"text": c.text, "score": c.score, "holds": answer_matches(c.text, [g]), "right": right(c.text, g),
             "fr": fr[id(c)], "fp": fp[id(c)], "ranker": fp[id(c)][NAMES.index("ranker")],
             # the code's cross-sentence terms: held * (held - first) - 0.3 * rank (its score less the sentence's)
             "cross": c.score - (fr[id(c)][NAMES.index("ranker")] - WEIGHTS.show_min + (
                 WEIGHTS.model_mean * c.model[1] + WEIGHTS.model_clause * is_clause(c.text) if c.model else 0.0))}
            for c in cands]})
    return rows


# --------------------------------------------------------------------------- the model
def _f1(pred: str, gold: str) -> float:
    p, g = re.findall(r"\w+", pred.lower()), re.findall(r"\w+", gold.lower())
    common = sum((collections.Counter(p) & collections.Counter(g)).values())
    return 0.0 if not common else 2 * common / (len(p) + len(g))


def _x(c: dict[str, Any], read: bool) -> list[float]:
    """A candidate's features for the fit: with the model's reading, its features and the code's whole score within
    the sentence (reading included); without it, the features without the reading."""
    return [*c["fr"], c["score"] - c["cross"] + WEIGHTS.show_min] if read else list(c["fp"])


class Clogit:
    """A conditional logit over each row's candidates (standardized features, L2): P(the holding ones)."""

    def __init__(self, read: bool, l2: float = 10.0) -> None:
        self.read, self.l2 = read, l2

    def fit(self, rows: list[dict[str, Any]]) -> Clogit:
        from scipy.optimize import minimize

        allx = np.array([_x(c, self.read) for r in rows for c in r["cands"]])
        self.mu, self.sd = allx.mean(0), allx.std(0) + 1e-6
        data = [((np.array([_x(c, self.read) for c in r["cands"]]) - self.mu) / self.sd,
                 np.array([c["holds"] for c in r["cands"]], bool)) for r in rows if any(c["holds"] for c in r["cands"])]

        def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
            total, grad = self.l2 * w @ w, 2 * self.l2 * w
            for xs, y in data:
                s = xs @ w
                p = np.exp(s - s.max())
                p /= p.sum()
                py = p[y].sum()
                total -= math.log(py + 1e-12)
                grad -= (p[y] @ xs[y]) / (py + 1e-12) - p @ xs
            return total, grad

        self.w = minimize(loss, np.zeros(len(self.mu)), jac=True, method="L-BFGS-B").x
        return self

    def score(self, row: dict[str, Any]) -> np.ndarray:
        return ((np.array([_x(c, self.read) for c in row["cands"]]) - self.mu) / self.sd) @ self.w

    def coefficients(self) -> list[float]:
        """Raw per-feature weights (log-odds per unit), the reading's weighed 0 (the plain model)."""
        raw = self.w / self.sd
        return [0.0 if n in READ else round(float(x), 4) for n, x in zip(NAMES, raw, strict=False)]


def _half(row_doc: str, salt: int) -> int:
    return zlib.crc32(f"{salt}:{row_doc}".encode()) % 2


def heldout(rows: list[dict[str, Any]], salts: int, read: bool, penalty: float) -> dict[str, Any]:
    """The learned model against the code's first (with the reading: the code's order; without: the hand-set ranker
    and the cross-sentence terms), each half of the documents graded by the model fitted on the other."""
    if not read:
        for r in rows:
            r["cands"] = sorted(r["cands"], key=lambda c: -(c["ranker"] + c["cross"]))
    total: collections.Counter[str] = collections.Counter()
    for salt in range(salts):
        for half in (0, 1):
            model = Clogit(read).fit([r for r in rows if _half(r["doc"], salt) != half])
            for r in (r for r in rows if _half(r["doc"], salt) == half):
                score = model.score(r) - penalty * np.log([len(c["text"].split()) + 1 for c in r["cands"]])
                got, code = r["cands"][int(np.argmax(score))], r["cands"][0]
                for g in ("all", r["source"], f"{r['source']}:{r['set']}", f"kind:{r['kind']}"):
                    for name, c in (("code", code), ("learned", got)):
                        total[f"{g} {name} holds"] += c["holds"]
                        total[f"{g} {name} right"] += c["right"]
                        total[f"{g} {name} f1"] += _f1(c["text"], r["gold"])
                        total[f"{g} {name} words"] += len(c["text"].split())
                    total[f"{g} win"] += got["holds"] and not code["holds"]
                    total[f"{g} loss"] += code["holds"] and not got["holds"]
                    total[f"{g} rows"] += 1
    return {k: round(v / salts, 1) for k, v in sorted(total.items())}


# --------------------------------------------------------------------------- the product's path, the learned order
def learned_order(original: Callable[..., Any], coef: Sequence[float], scale: float) -> Callable[..., Any]:
    """``short.value_candidates`` with the ranked phrases re-scored by the learned model where no model reads them
    (its log-odds times ``scale``, the code's cross-sentence terms kept)."""
    def value_candidates_learned(kind: str, question: str, sentences: Sequence[Extracted], weights: Any = WEIGHTS,
                                 model: Any = None) -> list[Any]:
        cands = original(kind, question, sentences, weights, model)
        if model is not None or not any(c.ranked for c in cands):
            return cands
        feats = _by_sentence(kind, question, cands, False)
        out = [dataclasses.replace(c, score=c.score - feats[id(c)][NAMES.index("ranker")] + scale * sum(
            a * b for a, b in zip(coef, feats[id(c)], strict=True))) if c.ranked else c for c in cands]
        return sorted(out, key=lambda c: -c.score)
    return value_candidates_learned


def product(walk: Path, coefs: list[list[float]], scale: float) -> dict[str, Any]:
    """The first value and the gate (``short_confidence.SHOW``) through ``first_value`` without a model, the hand-set
    ranker against the learned one (each half of the documents by the coefficients fitted on the other, salt 0): the
    gold-sentence items (first only) and the walk items (first and gated)."""
    from short_show import _extracted  # noqa: F401  (the walk items' sentences)

    from shelfwise.core.answers import first_value
    from shelfwise.core.answers.first_value import show_features
    from shelfwise.core.answers.short import _lead_in_list
    from shelfwise.core.answers.short_confidence import SHOW

    original = first_value.value_candidates
    ordered = [learned_order(original, c, scale) for c in coefs]
    total: collections.Counter[str] = collections.Counter()
    items = [(*i, None) for i in gold_items()] + list(walk_items(walk))
    for sset, q, sents, g, key, it in items:
        kind = asked_kind(q)
        if not sents or kind in ("span", "yes_no"):
            continue
        source, half = ("walk" if it else "gold"), _half(key, 0)
        group = "thing" if kind in NOMINAL else "value"
        for name, order in (("hand", original), ("learned", ordered[1 - half])):
            listed = _lead_in_list(q, sents) if kind == "list" else None
            cands = [] if listed else order(kind, q, sents)
            top, shown = "", False
            if listed:
                top, shown = listed.text, True
            elif cands and not (cands[0].ranked and cands[0].score < 0) and cands[0].text:
                top = cands[0].text
                shown = bool(it) and SHOW.shows(show_features(q, cands, it["passage_cos"]))[0]
            holds = bool(top) and answer_matches(top, [g])
            for grp in (f"{group}:{source}", f"{group}:{source}:{sset}", f"{group}:{source}:half{half}"):
                for k, v in (("first", bool(top)), ("first holds", holds), ("first right", bool(top) and right(top, g)),
                             ("words", len(top.split())), ("shown", shown), ("shown holds", shown and holds),
                             ("shown wrong", shown and not holds)):
                    total[f"{grp} {name} {k}"] += v
    return dict(sorted(total.items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("rows")
    p.add_argument("out", type=Path)
    p.add_argument("--walk", type=Path, required=True)
    p.add_argument("--caches", type=Path, nargs=2, required=True, help="the model's readings: gold items, walk items")
    p = sub.add_parser("heldout")
    p.add_argument("rows", type=Path)
    p.add_argument("--salts", type=int, default=5)
    p.add_argument("--read", action="store_true")
    p.add_argument("--length-penalty", type=float, default=0.0)
    p = sub.add_parser("fit")
    p.add_argument("rows", type=Path)
    p.add_argument("--fold", type=int, nargs=2, metavar=("SALT", "HALF"), help="fit on the other half only")
    p = sub.add_parser("product")
    p.add_argument("--walk", type=Path, required=True)
    p.add_argument("--coef", type=Path, nargs=2, required=True, help="fitted without half 0, without half 1")
    p.add_argument("--scale", type=float, default=2.0)
    p = sub.add_parser("replay")
    p.add_argument("coef", type=Path)
    p.add_argument("--scale", type=float, default=2.0)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.cmd == "rows":
        sys.path.insert(0, "/work/s27/answers")  # session 26's per-phrase cache of the model's readings
        from phrasecache import PhraseReadings  # type: ignore[import-not-found]

        caches = [PhraseReadings(c) for c in a.caches]
        rows = build_rows("gold", gold_items(), caches[0]) + build_rows("walk", walk_items(a.walk), caches[1])
        for c in caches:
            c.save()
        a.out.write_text(json.dumps(rows))
        print(len(rows), "rows", [c.fresh for c in caches], "read afresh")
    elif a.cmd == "heldout":
        print(json.dumps(heldout(json.loads(a.rows.read_text()), a.salts, a.read, a.length_penalty), indent=1))
    elif a.cmd == "fit":
        rows = json.loads(a.rows.read_text())
        if a.fold:
            rows = [r for r in rows if _half(r["doc"], a.fold[0]) != a.fold[1]]
        print(json.dumps({"rows": len(rows), "names": NAMES, "coef": Clogit(False).fit(rows).coefficients()}))
    elif a.cmd == "product":
        coefs = [json.loads(c.read_text())["coef"] for c in a.coef]
        print(json.dumps(product(a.walk, coefs, a.scale), indent=1))
    else:
        import short_replay

        from shelfwise.core.answers import first_value

        first_value.value_candidates = learned_order(first_value.value_candidates,
                                                     json.loads(a.coef.read_text())["coef"], a.scale)
        sys.argv = ["short_replay.py", *[x for x in a.rest if x != "--"]]
        short_replay.main()


if __name__ == "__main__":
    main()
