"""Shelfwise core: store, hierarchy, decision-model backends, navigation, answers, evaluation (no Qt)."""
