"""A collection's derived index, built after ingest: node vectors (`vectors`), topic clusters (`topics`), the
extractive answer's sentence vectors (`sentences`), embedding alongside parsing (`alongside`), finishing the whole
index with progress and clearing its pending mark (`finish`), and how far an index is (`state`). Calibration of the
decision model, which finishing runs, belongs to navigation (`navigation.calibrate`).
May import `shelfwise.core.store`, `shelfwise.core.models`, `shelfwise.core.navigation` and `shelfwise.core.answers`
(the sentence cutting the extractive answer reads); never ingestion, evaluation or a front end.
"""
