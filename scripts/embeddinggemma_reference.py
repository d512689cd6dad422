"""Make the EmbeddingGemma reference vectors the fidelity test compares Shelfwise's GGUF with (run once, by hand).

Development only: it needs PyTorch and sentence-transformers, which Shelfwise never installs. Use a venv outside the
repository::

    python3 -m venv /work/wt/stvenv
    /work/wt/stvenv/bin/pip install torch==2.13.0 sentence-transformers==6.2.0 transformers==5.23.0 sentencepiece
    /work/wt/stvenv/bin/python scripts/embeddinggemma_reference.py --model <assembled model folder> \
        --out tests/fixtures/embeddinggemma_reference.npz

The texts are written here by hand (several languages; questions get the query prompt, passages the document prompt
with or without a title); the fixture stores each text, its prompt and sentence-transformers' float32 vector.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

QUERY = "task: search result | query: "

QUERIES = [
    "How do I claim travel expenses?",
    "What is the meal allowance for a business trip?",
    "Can I carry over unused annual leave to next year?",
    "who approves overtime",
    "How long is the notice period when I resign?",
    "Where do I report a lost laptop?",
    "printer shows error E-12, what now",
    "Is parental leave paid?",
    "Wie beantrage ich Urlaub?",
    "Welche Unterlagen brauche ich für die Reisekostenabrechnung?",
    "Comment réinitialiser mon mot de passe ?",
    "Quelle est la durée de la période d'essai ?",
    "¿Cuántos días de vacaciones tengo al año?",
    "¿Dónde se encuentra la salida de emergencia?",
    "Как подать заявление на отпуск?",
    "Сколько стоит парковка у офиса?",
    "如何申请报销差旅费用？",
    "年假可以延期到明年吗？",
    "有給休暇はいつまでに申請しますか？",
    "كيف أقدم طلب إجازة سنوية؟",
    "कार्यालय में पार्किंग कहाँ है?",
    "Quanto tempo dura o período de experiência?",
    "Hoe vraag ik een nieuwe laptop aan?",
    "Yıllık izin nasıl talep edilir?",
    "Làm thế nào để đặt lại mật khẩu?",
    "Jak zgłosić awarię drukarki?",
]

DOCUMENTS: list[tuple[str | None, str]] = [
    (None, "Travel expenses are claimed within 30 days of the trip through the expenses portal, with receipts."),
    ("Meal allowance", "On business trips the daily meal allowance is 45 euros; breakfast included in the hotel "
     "price reduces it by 9 euros."),
    ("Annual leave", "Up to five days of unused annual leave may be carried over to the following year; the rest "
     "lapses on 31 March."),
    (None, "Overtime must be approved in advance by the line manager and is recorded in the time system."),
    ("Resignation", "The notice period is one month during the first two years of employment and three months "
     "after that."),
    (None, "Lost or stolen equipment is reported to the IT service desk at once, and to the police where a theft "
     "is suspected."),
    ("Printer errors", "Error E-12 means a paper jam in tray 2: open the side cover, remove the sheet and close the "
     "cover again."),
    (None, "Parental leave is paid at 80 percent of salary for the first twelve weeks."),
    ("Urlaub", "Urlaub wird im Personalportal beantragt und muss von der Führungskraft genehmigt werden."),
    (None, "Für die Reisekostenabrechnung sind alle Originalbelege und die Bahnfahrkarte beizufügen."),
    ("Mot de passe", "Pour réinitialiser votre mot de passe, cliquez sur « Mot de passe oublié » sur la page "
     "de connexion."),
    (None, "La période d'essai est de trois mois, renouvelable une fois avec l'accord des deux parties."),
    ("Vacaciones", "Cada empleado tiene derecho a veintitrés días laborables de vacaciones al año."),
    (None, "Las salidas de emergencia están señalizadas en verde al final de cada pasillo."),
    ("Отпуск", "Заявление на отпуск подаётся через кадровый портал не позднее чем за две недели."),
    (None, "Парковка у офиса бесплатна для сотрудников по пропуску."),
    ("差旅报销", "差旅费用应在出差结束后三十天内通过报销系统提交，并附上所有发票。"),
    (None, "未使用的年假最多可以延期五天，其余的在三月底作废。"),
    ("有給休暇", "有給休暇は取得予定日の二週間前までに上司に申請してください。"),
    (None, "تقدم طلبات الإجازة السنوية عبر بوابة الموارد البشرية قبل أسبوعين على الأقل."),
    ("पार्किंग", "कर्मचारियों के लिए पार्किंग भवन के पीछे है और पास से मुफ्त है।"),
    (None, "O período de experiência dura noventa dias e pode ser prorrogado uma vez."),
    ("Laptop aanvragen", "Een nieuwe laptop vraagt u aan via de IT-servicedesk; de manager keurt de aanvraag goed."),
    (None, "Yıllık izin talepleri insan kaynakları portalı üzerinden en az iki hafta önceden yapılır."),
    ("Mật khẩu", "Để đặt lại mật khẩu, hãy nhấn vào « Quên mật khẩu » trên trang đăng nhập."),
    (None, "Awarię drukarki zgłasza się przez formularz w intranecie lub telefonicznie w dziale IT."),
    ("Safety", "Fire drills take place twice a year; everyone leaves the building by the nearest marked exit and "
     "gathers in the car park."),
    (None, "Shelfwise"),
    (None, "42"),
    ("Table", "Region | Q1 | Q2\nNorth | 120 | 135\nSouth | 98 | 101"),
]

LONG = (
    "The handbook explains how employees request time off, how managers approve it and how the payroll team "
    "records it. " * 40
)


def document_prompt(title: str | None) -> str:
    return f"title: {title or 'none'} | text: "


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, required=True, help="the assembled sentence-transformers folder")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(args.model), device="cpu")
    items = [(QUERY, q) for q in QUERIES] + [(document_prompt(t), d) for t, d in DOCUMENTS]
    items.append((document_prompt(None), LONG))
    vecs = np.stack([st.encode(text, prompt=prompt, normalize_embeddings=True) for prompt, text in items])
    meta = {"prompts": [pr for pr, _ in items], "texts": [t for _, t in items],
            "model": "google/embeddinggemma-300m via sentence-transformers", "max_seq_length": st.max_seq_length}
    np.savez_compressed(args.out, vectors=vecs.astype(np.float32), meta=np.array(json.dumps(meta, ensure_ascii=False)))
    print(f"wrote {args.out}: {vecs.shape[0]} texts x {vecs.shape[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
