"""Secret redaction, applied before anything is stored and before a turn is shown to a model.

Every writer of long-term memory runs text through :func:`redact_secrets` first: the extraction node (the turn it
reads, the candidates a model returns), the write gate (memories, KV facts, pending rows, provenance rationale)
and the retry queue (the queued messages and the recorded error). The offline extractor imports it from here too,
and drops any statement whose value would be a secret.

What counts as a secret: private key blocks, provider API keys and tokens (OpenAI/Stripe-style ``sk-``, GitHub,
GitLab, AWS access key ids, Slack, Google), JWTs, bearer/basic credentials, passwords in URLs, and any value
assigned to a word like password / token / api key / secret / credentials / dsn (also ``密码是 ...``, ``令牌：...``).
A bare high-entropy string with no such marker is not recognised.
"""

from __future__ import annotations

import re

__all__ = ["REDACTED", "contains_secret", "find_secrets", "redact_secrets", "scrub"]

REDACTED = "[REDACTED]"

_SECRET_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S), REDACTED),
    (re.compile(r"\b(?:sk|rk|pk)[-_](?:live|test|proj|ant|or)?[-_]?[A-Za-z0-9_\-]{16,}"), REDACTED),
    (re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"), REDACTED),
    (re.compile(r"\bglpat-[A-Za-z0-9_\-]{16,}"), REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"), REDACTED),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"), REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), REDACTED),
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]+"), REDACTED),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/\-=]{8,}"), rf"\1 {REDACTED}"),
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+):[^\s@/]+@"), rf"\1:{REDACTED}@"),
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[A-Za-z0-9_\-]{16,}@"), rf"\1{REDACTED}@"),
    (
        re.compile(
            r"(?i)\b((?:[a-z0-9]+_)*(?:password|passwd|pwd|passphrase|secret|token|api[_\s-]?key|access[_\s-]?key|"
            r"private[_\s-]?key|client[_\s-]?secret|credentials?|dsn|webhook[_\s-]?secret)(?:_[a-z0-9]+)*)"
            # "token is X" / "token: X" take any value; "token X" only a value that looks like one (a digit, 8+
            # characters), so "token budget" or "secret sauce" stay prose. A sentence's final stop is not the value.
            r"(?:(\s*(?:is|was|are|[:=])\s*)(?!\[REDACTED\])(?:\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|"
            r"[^\s\"',;，。]{2,}[^\s\"',;，。.])"
            r"|(\s+)(?!\[REDACTED\])(?=[^\s\"',;，。]*\d)[^\s\"',;，。]{7,}[^\s\"',;，。.])"
        ),
        lambda m: f"{m.group(1)}{m.group(2) or m.group(3)}{REDACTED}",
    ),
    (
        re.compile(r"(密码|口令|密钥|秘钥|令牌|token|Token|TOKEN)(\s*(?:是|为|：|:|=)\s*)(?!\[REDACTED\])[^\s，。,;；]{3,}"),
        rf"\1\2{REDACTED}",
    ),
)


def redact_secrets(text: str) -> str:
    """Replace API keys, tokens, passwords, private keys and URL credentials in ``text`` with ``[REDACTED]``."""
    for pattern, repl in _SECRET_PATTERNS:
        text = pattern.sub(repl, text)
    return text


def find_secrets(text: str) -> list[str]:
    """The secret strings themselves (without the "password is" around them), so they can be scrubbed elsewhere.

    A model shown the redacted turn can still be handed (or guess) a bare value; :func:`scrub` removes these
    literals from whatever it returns, even where no marker word is left to recognise them by.
    """
    found: list[str] = []
    for pattern, repl in _SECRET_PATTERNS:
        for m in pattern.finditer(text):
            pre, _, post = (repl(m) if callable(repl) else m.expand(repl)).partition(REDACTED)
            whole = m.group(0)
            secret = whole[len(pre):len(whole) - len(post)].strip().strip("\"'")
            for literal in (secret, secret.rstrip(".!?:)")):  # "... is hunter2." -> also "hunter2"
                if len(literal) >= 3 and literal not in found:
                    found.append(literal)
    return found


def scrub(text: str, secrets: list[str] | tuple[str, ...]) -> str:
    """``redact_secrets`` plus every literal in ``secrets`` (longest first) replaced by ``[REDACTED]``."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return redact_secrets(text)


def contains_secret(text: str | None) -> bool:
    """True when ``text`` holds something :func:`redact_secrets` would replace."""
    return bool(text) and redact_secrets(text) != text
