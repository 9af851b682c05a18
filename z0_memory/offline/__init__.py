"""Deterministic, offline algorithms: no database and no LLM.

The retrieval loop's gateway (``router``), sceptical judge (``judge``), query rewriter (``rewriter``) and the fusion
of evidence accumulated across rounds (``fusion``) live here, so the loop works, and can be tested, without a model.
So does the rule-based, bilingual post-turn extractor (``extractor``) and its secret redaction.
"""
