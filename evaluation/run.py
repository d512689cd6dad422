"""``shelfwise eval``: build (or reuse) the evaluation collection, run every method side by side, write reports."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from shelfwise.core.indexing.encoder import adopt_identity
from shelfwise.core.indexing.vectors import refresh_collection
from shelfwise.core.models.backend import DecisionBackend, Embedder, RelevanceJudge
from shelfwise.core.navigation.snapshots import load_decision, snapshot_for
from shelfwise.core.paths import data_dir
from shelfwise.core.settings import Settings
from shelfwise.core.store.db import FileMeta, Store
from shelfwise.evaluation.datasets import EvalSet, load_conditionalqa, load_jsonl, load_squad
from shelfwise.evaluation.retrieval import MethodResult, Methods, run_methods

DEFAULT_METHODS = ("bm25", "dense", "hybrid", "rrf", "rerank_control", "navigation")
EVAL_DB_VERSION = 3  # bump when ingest or indexing changes what the eval collection holds (3: section vectors)
SWEEP_RATIOS = (0.05, 0.1, 0.2, 0.35, 0.5, 1.0)


def shared_dir() -> Path:
    """``../shared`` next to the repository checkout (the evaluation data is not copied into the repo)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        cand = parent / "shared" / "evaldata"
        if cand.is_dir():
            return parent / "shared"
    return Path.cwd().parent / "shared"


def load_dataset(name: str, limit: int | None = None, root: Path | None = None, split: str = "all",
                 lang: str | None = None, query_lang: str | None = None) -> EvalSet:
    """``split`` selects ConditionalQA's questions (tune | test | all; the documents are always all 59 guides);
    other datasets have no split and accept only ``all``. ``lang`` / ``query_lang``: XQuAD's paragraph and question
    languages."""
    if name.startswith("traindata:"):  # a training set as a collection (tuning only: ../shared/traindata)
        if split != "all" or lang or query_lang:
            raise ValueError("traindata sets have no split and no languages")
        from shelfwise.evaluation.traindata import load_traindata

        return load_traindata((root or shared_dir()) / "traindata", name.split(":", 1)[1], limit=limit)
    base = (root or shared_dir()) / "evaldata"
    if name == "xquad":
        if split != "all":
            raise ValueError("xquad has no tune/test split (only conditionalqa does)")
        from shelfwise.evaluation.xquad import load_xquad

        return load_xquad(base / "xquad", lang or "en", query_lang=query_lang, limit=limit)
    if lang or query_lang:
        raise ValueError("--lang and --query-lang are for xquad only")
    if name in ("conditionalqa", "conditionalqa_dev"):
        ds = load_conditionalqa(base / "conditionalqa_dev", split=split)
        if limit:
            ds.questions = ds.questions[:limit]
        return ds
    if split != "all":
        raise ValueError(f"{name} has no tune/test split (only conditionalqa does)")
    if name in ("squad", "squad_v1.1_dev"):
        return load_squad(base / "squad_v1.1_dev", limit=limit)
    raise ValueError(f"unknown dataset {name!r}: use conditionalqa, squad, xquad or traindata:SET")


def tunable(dataset: str, split: str) -> bool:
    """Data that choices may be made on: ConditionalQA's tune half and the training sets (never evaluation data)."""
    return (dataset == "conditionalqa" and split == "tune") or dataset.startswith("traindata:")


def build_collection(store: Store, ds: EvalSet, embedder: Embedder, settings: Settings,
                     progress: Callable[[str], None] | None = None) -> int:
    """Write the dataset's documents into ``store`` (once; reused while unchanged) and index them (the vectors stored
    under the encoder's name of before the identity rule are renamed first, as a library the app opens has them
    renamed, rather than made again)."""
    adopt_identity(store, embedder)
    coll = store.collection(ds.store_name)
    have = {d.path for d in store.documents(coll.id)}
    todo = [d for d in ds.documents if d.path not in have]
    for i, doc in enumerate(todo):
        store.write_document(coll.id, doc.path, FileMeta(size=0, mtime=0.0, sha256=doc.path), doc.parsed)
        if progress and i % 100 == 0:
            progress(f"writing documents {i}/{len(todo)}")
    refresh_collection(store, coll.id, embedder, settings.budgets,
                       progress=(lambda d, t: progress(f"embedding {d}/{t}")) if progress else None)
    return coll.id


@dataclass
class EvalCollection:
    """A public dataset's collection, indexed and calibrated, ready to walk (what the tuning benchmarks replay)."""

    ds: EvalSet
    methods: Methods
    q_vecs: np.ndarray  # the questions' vectors, in ``ds.questions`` order


@contextmanager
def eval_collection(dataset: str, split: str, limit: int | None, embedder: Embedder,
                    settings: Settings) -> Iterator[EvalCollection]:
    """The dataset's eval library in the user data dir (built and calibrated once, as ``shelfwise eval`` does, with
    no generative model), its walk methods and the questions' vectors; the store is closed on exit."""
    ds = load_dataset(dataset, limit, split=split)
    store = Store(data_dir() / "eval" / f"{ds.store_name}-v{EVAL_DB_VERSION}.db")
    try:
        from shelfwise.core.navigation.calibrate import ensure_calibrated

        cid = build_collection(store, ds, embedder, settings, progress=print)
        ensure_calibrated(store, cid, embedder, None, settings, log=print)
        snap = snapshot_for(store, cid, embedder.model_id)
        decision = load_decision(store, cid, embedder, None)
        m = Methods(store, cid, snap, embedder, None, settings, decision)
        q_vecs = np.asarray(embedder.embed_queries([q.query for q in ds.questions]), np.float32)
        yield EvalCollection(ds, m, q_vecs)
    finally:
        store.close()


@dataclass
class EvalReport:
    dataset: str
    questions: int
    methods: dict[str, MethodResult]
    split: str = "all"
    sweep: list[dict] = field(default_factory=list)
    calibration: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    seconds: float = 0.0
    prior_fit: dict = field(default_factory=dict)  # --fit-prior (tune half only): re-derived prior weights

    def to_json(self) -> dict:
        return {
            "dataset": self.dataset, "split": self.split, "questions": self.questions,
            "seconds": round(self.seconds, 1),
            "methods": {k: v.metrics for k, v in self.methods.items()}, "budget_sweep": self.sweep,
            "calibration": self.calibration, "settings": self.settings,
            **({"prior_fit": self.prior_fit} if self.prior_fit else {}),
        }

    def markdown(self) -> str:
        cols = ["document_hit1", "document_recall10", "section_hit1", "section_recall10", "passage_hit1",
                "passage_recall5", "passage_recall10", "passage_mrr", "median_seconds", "p90_seconds",
                "tokens_per_query", "requests_per_query", "judged_per_query"]
        split = "" if self.split == "all" else f", {self.split} half"
        lines = [f"# Shelfwise evaluation: {self.dataset}{split} ({self.questions} questions)", "",
                 "| method | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
        for name, res in self.methods.items():
            lines.append(f"| {name} | " + " | ".join(str(res.metrics.get(c, "")) for c in cols) + " |")
        if self.sweep:
            lines += ["", "## Budget sweep (first-level keep ratio; navigation without the generative model "
                      "and without hybrid candidates)", "",
                      "| keep ratio | passage R@10 | section R@10 | document R@10 | tokens/query |",
                      "|---|---|---|---|---|"]
            for s in self.sweep:
                lines.append(f"| {s['ratio']} | {s['passage_recall10']} | {s['section_recall10']} | "
                             f"{s['document_recall10']} | {s['tokens_per_query']} |")
        if self.calibration:
            lines += ["", "## Calibration", "", "```", json.dumps(self.calibration, indent=1)[:3000], "```"]
        return "\n".join(lines) + "\n"


def run_eval(
    dataset: str, *, limit: int | None, methods: Sequence[str], embedder: Embedder,
    backend: DecisionBackend | None, settings: Settings,
    db_path: Path | None = None, sweep: bool = True, progress: Callable[[int, int, str], None] | None = None,
    log: Callable[[str], None] | None = None, calibrate: bool = True, calibrate_lm: bool = False,
    collection: str = "default", split: str = "all", fit_prior: bool = False,
    judge: RelevanceJudge | None = None,
    lang: str | None = None, query_lang: str | None = None,
) -> EvalReport:
    t0 = time.perf_counter()
    if fit_prior and not tunable(dataset, split):
        raise ValueError("--fit-prior chooses weights by looking at results: only on conditionalqa --split tune "
                         "or a traindata:SET collection")
    own = dataset.endswith(".jsonl")
    if own:  # the user's own labelled questions, over a collection of their library
        ds = EvalSet(collection, [], load_jsonl(Path(dataset)))
        if limit:
            ds.questions = ds.questions[:limit]
        if db_path is None:
            raise ValueError("evaluating your own questions needs the library database (--db)")
    else:
        ds = load_dataset(dataset, limit, split=split, lang=lang, query_lang=query_lang)
    db_path = db_path or data_dir() / "eval" / f"{ds.store_name}-v{EVAL_DB_VERSION}.db"
    store = Store(db_path)
    try:
        if own:
            coll = store.find_collection(collection)
            if coll is None:
                raise ValueError(f"no collection {collection!r} in {db_path}")
            cid = coll.id
            adopt_identity(store, embedder)
            refresh_collection(store, cid, embedder, settings.budgets)
        else:
            cid = build_collection(store, ds, embedder, settings, progress=log)
        if calibrate:
            from shelfwise.core.navigation.calibrate import ensure_calibrated

            # Trying the generative model during calibration costs ~1k tokens per probe; off unless asked.
            ensure_calibrated(store, cid, embedder, backend if calibrate_lm else None, settings, log=log)
        snap = snapshot_for(store, cid, embedder.model_id)
        decision = load_decision(store, cid, embedder, backend)
        m = Methods(store, cid, snap, embedder, backend, settings, decision, judge=judge)
        q_vecs = np.asarray(embedder.embed_queries([q.query for q in ds.questions]), np.float32)
        prior_fit = {}
        if fit_prior:
            from shelfwise.evaluation.tune import fit_prior as fit

            prior_fit = fit(m, ds.questions, log=log)
        results = run_methods(m, ds.questions, list(methods), q_vecs, progress=progress)
        sweep_rows = []
        if sweep:
            for ratio in SWEEP_RATIOS:
                per = []
                for q, vec in zip(ds.questions, q_vecs, strict=True):
                    from shelfwise.evaluation.retrieval import judge as mark

                    r = m.navigation(q.query, vec, readout="embedding", first_keep_ratio=ratio, hybrid=0, sweep=True)
                    per.append({**mark(snap, m.doc_path, q, r.passages), "tokens": r.cost.tokens})
                sweep_rows.append({"ratio": ratio, **{k: round(float(np.mean([p[k] for p in per])), 4) for k in (
                    "passage_recall10", "section_recall10", "document_recall10", "tokens")}})
                sweep_rows[-1]["tokens_per_query"] = sweep_rows[-1].pop("tokens")
        return EvalReport(
            dataset=ds.name, split=split, questions=len(ds.questions), methods=results, sweep=sweep_rows,
            calibration=decision.report, settings={"readout": settings.readout, **settings.budgets.to_dict(),
                                                   "embedder": embedder.model_id,
                                                   "lm_levels": list(decision.lm_levels), "keep": decision.keep,
                                                   "judge": judge.model_id if judge is not None else None,
                                                   "judge_levels": list(settings.judge_levels) if judge else [],
                                                   "judge_top": settings.judge_top if judge else 0},
            seconds=time.perf_counter() - t0, prior_fit=prior_fit,
        )
    finally:
        store.close()


def write_reports(report: EvalReport, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = out_dir / (f"eval-{report.dataset}" + ("" if report.split == "all" else f"-{report.split}"))
    paths = [stem.with_suffix(".json"), stem.with_suffix(".md")]
    paths[0].write_text(json.dumps(report.to_json(), indent=1))
    paths[1].write_text(report.markdown())
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for name, res in report.methods.items():
            axes[0].scatter(res.metrics["median_seconds"], res.metrics["passage_hit1"], s=40)
            axes[0].annotate(name, (res.metrics["median_seconds"], res.metrics["passage_hit1"]), fontsize=8)
        axes[0].set_xscale("symlog", linthresh=0.01)
        axes[0].set_xlabel("median seconds per query")
        axes[0].set_ylabel("passage Hit@1")
        axes[0].set_title("quality vs time")
        if report.sweep:
            xs = [s["ratio"] for s in report.sweep]
            for key in ("passage_recall10", "section_recall10", "document_recall10"):
                axes[1].plot(xs, [s[key] for s in report.sweep], marker="o", label=key)
            axes[1].set_xscale("log")
            axes[1].set_xlabel("first-level keep ratio")
            axes[1].set_ylabel("Recall@10")
            axes[1].legend(fontsize=8)
            axes[1].set_title("budget sweep")
        fig.tight_layout()
        png = stem.with_suffix(".png")
        fig.savefig(png, dpi=110)
        plt.close(fig)
        paths.append(png)
    except ImportError:
        pass
    return paths
