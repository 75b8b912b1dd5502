"""Scoring, pure: text normalisation and tokens, the reference and fielded scorers, bm25 and the
baselines, the strong/weak judgement, the noise filter and the candidate sets."""
