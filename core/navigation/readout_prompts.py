"""Prompts for the navigation readouts (pure text; no model here).

Likelihood layout: [context][candidate][query]. The context is query-independent and shared by every candidate, the
candidate text is query-independent too (so its KV state can be cached across queries), and only the query's tokens
are new for each question.
"""

from __future__ import annotations

from shelfwise.core.store.snapshot import NodeInfo, Snapshot

MAX_CANDIDATE_CHARS = 360


def candidate_text(snap: Snapshot, node: NodeInfo) -> str:
    """What the generative model reads for a candidate: its heading path and title, then its description or text."""
    if node.kind == "passage":
        head = " > ".join(node.heading_path)
        body = " ".join(node.text.split())[:MAX_CANDIDATE_CHARS]
        return f"{head}\n{body}" if head else body
    path = " > ".join([*node.heading_path, node.title]) if node.kind == "section" else node.title
    desc = " ".join((node.description or "").split())[:MAX_CANDIDATE_CHARS]
    return f"{path}\n{desc}" if desc and desc != path else path


def judge_text(snap: Snapshot, node: NodeInfo) -> str:
    """What the relevance judge reads for a candidate, shaped as it was trained (``training/``): the document
    title and heading path, then the passage (or the section's / document's description)."""
    doc = snap.document_of(node.id) if node.kind != "document" else None
    trail = [doc.title] if doc is not None and doc.title else []
    if node.kind == "passage":
        head = " > ".join([*trail, *node.heading_path])
        body = " ".join(node.text.split())[:MAX_CANDIDATE_CHARS]
        return f"{head}: {body}" if head else body
    path = " > ".join([*trail, *node.heading_path, node.title]) if node.kind == "section" else node.title
    desc = " ".join((node.description or "").split())[:MAX_CANDIDATE_CHARS]
    return f"{path}: {desc}" if desc and desc != path else path


def likelihood_context() -> str:
    return "The following text answers the question asked after it.\n\nText: "


def likelihood_query(query: str) -> str:
    return "\n\nQuestion: " + " ".join(query.split())


def binary_prompt(query: str, texts: list[str]) -> tuple[str, list[str]]:
    """Shared listing + query as the context; one short yes/no question per candidate."""
    lines = ["Below are numbered parts of a document collection, then a question.", ""]
    for i, t in enumerate(texts, 1):
        lines.append(f"[{i}] " + " ".join(t.split())[:200])
    lines += ["", f"Question: {' '.join(query.split())}", ""]
    questions = [f"Is part [{i}] likely to contain the answer? Answer Yes or No. Answer:"
                 for i in range(1, len(texts) + 1)]
    return "\n".join(lines), questions
