"""Secret redaction, applied before anything is stored and before any model sees a turn.

Where it runs: the extraction node (the turn it reads, and every field of the candidates an extractor returns,
key included), the write gate (memories, KV facts, pending rows, provenance rationale), the retry queue, every
model call (``z0_memory.llm`` redacts each message before the extractor, the judge or the responder sees it), the
query of a dense search before it is embedded, and the session checkpoints (``stores.session``, unless
``redact_checkpoints`` is off). The offline extractor imports it from here too.

What counts as a secret, found by three kinds of rules over the same text:

* **known token shapes**, ours and the regex plugins of Yelp's ``detect-secrets`` (AWS, Azure storage, GitHub,
  GitLab, Slack, Stripe, SendGrid, Twilio, Mailchimp, Discord, Telegram, PyPI, IBM, Artifactory, Square, ...):
  OpenAI/Anthropic ``sk-``, ``hf_``, ``npm_``, Google ``AIza`` keys and ``ya29.`` OAuth tokens, JWTs, private key
  blocks (PEM, OpenSSH, PGP, PuTTY), Azure ``AccountKey=`` / ``SharedAccessKey=`` and SAS ``sig=``, bearer tokens
  and passwords in URLs (also ones containing ``/`` or ``@``: up to the URL's last ``@``);
* **context**: a value assigned to a word like password / token / api key / secret / credentials / dsn, in prose,
  env, YAML or JSON (``"password": "..."``, ``DB_PASSWORD=``, ``apiKey:``), and in Chinese (``密码是 ...``,
  ``令牌：...``). A password takes any value that is not a plain word ("the password is stored in Vault",
  "密码是什么" stay); a token or key only one that looks like one (a digit, a symbol or mixed case);
* **entropy**: a bare run of 24+ base64/url-safe characters with upper case, lower case and digits whose Shannon
  entropy is at least 4.5 bits per character (detect-secrets' default limit), so hex hashes and UUIDs (at most 4
  bits) and identifiers are kept.

No rule relies on ``\\b``: next to Chinese text a word boundary never fires (CJK characters are word characters),
so token starts are found with explicit look-behinds on ASCII token characters. Every rule reports the span of the
secret itself; spans are merged and each is replaced by ``[REDACTED]``. Redacting is idempotent and cached by text
(a thread's history is redacted again on every model call).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = ["REDACTED", "contains_secret", "find_secrets", "key_holds_secret", "redact_secrets", "redact_value", "scrub"]

REDACTED = "[REDACTED]"

_TOK = r"A-Za-z0-9_\-"
_START = rf"(?<![{_TOK}])"  # start of an ASCII token; unlike \b it fires after Chinese text
ENTROPY_LIMIT = 4.5
ENTROPY_MIN_LENGTH = 24


@dataclass(frozen=True)
class _Rule:
    name: str
    pattern: re.Pattern[str]
    span: Callable[[re.Match[str]], tuple[int, int] | None]


def _whole(m: re.Match[str]) -> tuple[int, int]:
    return m.span()


def _group(n: int | str) -> Callable[[re.Match[str]], tuple[int, int] | None]:
    return lambda m: m.span(n) if m.group(n) else None


def _shape(name: str, pattern: str, flags: int = 0, span: Callable[[re.Match[str]], Any] = _whole) -> _Rule:
    return _Rule(name, re.compile(pattern, flags), span)


_SHAPES: list[_Rule] = [
    _shape("private_key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
                          r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)", re.DOTALL),
    _shape("putty_key", r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC:\s*[0-9A-Fa-f]+|\Z)", re.DOTALL),
    _shape("sk_key", rf"{_START}(?:sk|rk)[-_](?=[{_TOK}]*\d)[{_TOK}]{{16,}}"),
    _shape("github", rf"{_START}(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{{20,}}|github_pat_[A-Za-z0-9_]{{20,}})"),
    _shape("gitlab", rf"{_START}(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-[{_TOK}]{{16,}}"),
    _shape("aws_key_id", rf"{_START}(?:AKIA|ASIA|AGPA|AIDA|AROA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{{16}}(?![A-Za-z0-9])"),
    _shape("slack", rf"{_START}xox[abposre]-[A-Za-z0-9\-]{{10,}}|https://hooks\.slack\.com/services/[A-Za-z0-9_/]+"),
    _shape("google_key", rf"{_START}AIza[0-9A-Za-z_\-]{{30,}}"),
    _shape("google_oauth", rf"{_START}(?:ya29\.[0-9A-Za-z_\-.]{{19,}}[0-9A-Za-z_\-]|1//0[0-9A-Za-z_\-]{{30,}})"),
    _shape("huggingface", rf"{_START}(?:hf_|api_org_)[A-Za-z0-9]{{30,}}"),
    _shape("npm", rf"{_START}npm_[A-Za-z0-9]{{30,}}"),
    _shape("pypi", rf"{_START}pypi-[{_TOK}]{{50,}}"),
    _shape("jwt", rf"{_START}eyJ[{_TOK}]{{5,}}\.[{_TOK}]{{5,}}\.[{_TOK}]*"),
    _shape("azure_key", r"(?i:AccountKey|SharedAccessKey|SharedSecret)\s*=\s*([A-Za-z0-9+/]{20,}={0,2})", span=_group(1)),
    _shape("sas_signature", r"[?&](?i:sig)=([A-Za-z0-9%+/=]{16,})", span=_group(1)),
    _shape("bearer", r"(?<![A-Za-z0-9])(?i:bearer|basic)\s+((?=[A-Za-z0-9._~+/=\-]*\d)[A-Za-z0-9._~+/=\-]{8,})",
           span=_group(1)),
    # user:password@host, the password up to the URL's LAST '@' (it may hold '/' and '@'); the host after it
    _shape("url_password", r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#]*:(\S+)@"
                           r"(?=[A-Za-z0-9.\-\[\]:_%~]*(?![A-Za-z0-9.\-\[\]:_%~@]))", span=_group(1)),
    _shape("url_token_user", r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://([A-Za-z0-9_\-]{16,})@", span=_group(1)),
]

# --- context: a value assigned to a secret-naming word ------------------------------------------------------------
_KW_EN = (r"pass(?:word|wd|phrase)|pwd|secret|token|api[_\s\-]?key|access[_\s\-]?key|private[_\s\-]?key|"
          r"client[_\s\-]?secret|credentials?|dsn")
_KW_ZH = r"密码|口令|密钥|秘钥|令牌|凭证|凭据|私钥"
_SUFFIX = r"(?:[_.\-]?(?:access|key|value|string|b64|base64|hex|id|token|secret|pass|pwd|\d+))*"
_OWNER = (r"(?:\s+(?:for|of)\s+(?:the\s+|our\s+|my\s+|this\s+)?[A-Za-z0-9.\-]+"
          r"(?:\s+(?:account|user|server|database|db|api|service|instance|cluster))?)?")
_CONNECTOR = (r"[\"']?(?:\s+(?i:is|was|are|set\s+to|changed\s+to)\s+|\s*(?:=>|:=|[:=：])\s*|"
              r"\s*(?:就是|设置为|设为|改为|改成|是(?![否不])|为(?!什么|何|了|空))\s*)")
_VALUE = r"(?:\"(?P<dq>[^\"\n]{1,200})\"|'(?P<sq>[^'\n]{1,200})'|(?P<bare>[^\s\"'`,;，。；、？！（）]{2,300}))"
_KEYWORD = re.compile(
    rf"(?P<kw>(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_.\-])*[A-Za-z0-9]*?(?i:{_KW_EN})(?i:{_SUFFIX})(?i:{_OWNER})|{_KW_ZH})"
    rf"(?:{_CONNECTOR}{_VALUE}|(?P<sp>\s+)(?P<loose>(?=[^\s\"',;，。]*\d)[^\s\"',;，。]{{8,300}}))",
)
_PASSWORD_WORD = re.compile(r"(?i)pass|pwd|密码|口令")
_CJK = re.compile(r"[\u3400-\u9fff]")
_STOPWORD_TEXT = """
is was are be been being the a an not no none null nil required needed missing wrong incorrect invalid expired set
changed stored kept saved empty rotated correct valid secure strong weak too in on at from for to of and or with
managed hidden redacted unknown same different there here ok fine leaked compromised reset updated protected
encrypted hashed long short private public shared per via by only also still now then always never optional
mandatory enabled disabled true false this that it my our your their his her its what which where when who how why
used needs should must will can cannot may might does do did has have had lost forgotten generated provided given
configured sent new old default same-as here: there: below above following
什么 多少 啥 哪个 对的 错的 空 空的 一样 正确 错误 正确的 错误的 必填 必须 多久 过期 过期了
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())  # values that are words of a sentence, not credentials
# a reference to a secret kept elsewhere, or a stand-in for one: $VAR, ${VAR}, {{ var }}, <token>, %VAR%, ***, xxxx
_PLACEHOLDER = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{[^}]*\}\}|<[^<>]+>|%[A-Za-z_][A-Za-z0-9_]*%|"
                          r"[*xX•.…]+|(?i:your)[_\-][A-Za-z_\-]+")


def _keyword_span(m: re.Match[str]) -> tuple[int, int] | None:
    kw = m.group("kw")
    if m.group("loose") is not None:
        return m.span("loose")
    group = next(g for g in ("dq", "sq", "bare") if m.group(g) is not None)
    start, end = m.span(group)
    value = m.group(group)
    if _PLACEHOLDER.fullmatch(value.strip().rstrip(".,;:!?")):
        return None
    if group == "bare":  # a sentence's last stop or a closing bracket is not part of the value
        trimmed = value.rstrip(".!?:)]}>")
        end -= len(value) - len(trimmed)
        value = trimmed
    value = value.strip()
    if (len(value) < 2 or value.startswith("[REDACTED") or value.lower().rstrip(".!?") in _STOPWORDS
            or _PLACEHOLDER.fullmatch(value)):  # also once trimmed
        return None
    if group != "bare" or _PASSWORD_WORD.search(kw) or _CJK.search(kw):
        return start, end
    # a token / key / secret: only a value that looks like one ("the secret is caching" stays prose)
    looks = (any(c.isdigit() for c in value) and len(value) >= 6) or len(value) >= 20 or (
        any(c.islower() for c in value) and any(c.isupper() for c in value) and len(value) >= 8
    ) or (len(value) >= 8 and bool(re.search(r"[_+/=@#$%&*!~\-]", value)))
    return (start, end) if looks else None


_CONTEXT = _Rule("keyword", _KEYWORD, _keyword_span)

# --- entropy: a bare random-looking string -------------------------------------------------------------------------
_ENTROPY_CANDIDATE = re.compile(rf"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{{{ENTROPY_MIN_LENGTH},}}")


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text`` (detect-secrets' measure)."""
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values()) if n else 0.0


def _entropy_span(m: re.Match[str]) -> tuple[int, int] | None:
    token = m.group(0)
    if not (any(c.isupper() for c in token) and any(c.islower() for c in token) and any(c.isdigit() for c in token)):
        return None
    return m.span() if shannon_entropy(token) >= ENTROPY_LIMIT else None


_ENTROPY = _Rule("entropy", _ENTROPY_CANDIDATE, _entropy_span)


# --- detect-secrets' regex plugins ---------------------------------------------------------------------------------
def _plugin_rules() -> list[_Rule]:
    """The known-token regexes of detect-secrets' plugins (its maintained list of provider formats).

    Left out: the public-IP detector (an address is not a credential), the private-key and JWT detectors (they match
    only a header or half a token: our rules take the whole block), npm (its pattern runs to the end of the line;
    ``npm_`` tokens and ``_authToken=`` are ours) and the keyword and entropy plugins, which scan source files
    (ours read prose, in two languages). A plugin's capture group is the secret when it follows something (the
    password of ``user:password@``); a group that starts the match is a prefix (GitHub's ``ghp``): the whole match.
    """
    from detect_secrets.plugins.artifactory import ArtifactoryDetector
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
    from detect_secrets.plugins.basic_auth import BasicAuthDetector
    from detect_secrets.plugins.cloudant import CloudantDetector
    from detect_secrets.plugins.discord import DiscordBotTokenDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
    from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
    from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
    from detect_secrets.plugins.mailchimp import MailchimpDetector
    from detect_secrets.plugins.openai import OpenAIDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.sendgrid import SendGridDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.softlayer import SoftlayerDetector
    from detect_secrets.plugins.square_oauth import SquareOAuthDetector
    from detect_secrets.plugins.stripe import StripeDetector
    from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
    from detect_secrets.plugins.twilio import TwilioKeyDetector

    def span(m: re.Match[str]) -> tuple[int, int] | None:
        if m.re.groups and m.group(1) and m.start(1) > m.start():
            return m.span(1)
        start, end = m.span()
        text = m.string
        while start < end and text[start] in " \t\r\n\"'=:":
            start += 1
        while end > start and text[end - 1] in " \t\r\n\"'":
            end -= 1
        return (start, end) if end > start else None

    rules = []
    for plugin in (ArtifactoryDetector, AWSKeyDetector, AzureStorageKeyDetector, BasicAuthDetector, CloudantDetector,
                   DiscordBotTokenDetector, GitHubTokenDetector, GitLabTokenDetector, IbmCloudIamDetector,
                   IbmCosHmacDetector, MailchimpDetector, OpenAIDetector, PypiTokenDetector, SendGridDetector,
                   SlackDetector, SoftlayerDetector, SquareOAuthDetector, StripeDetector, TelegramBotTokenDetector,
                   TwilioKeyDetector):
        for pattern in plugin().denylist:
            rules.append(_Rule(f"detect-secrets:{plugin.__name__}", pattern, span))
    return rules


_RULES: tuple[_Rule, ...] = (*_SHAPES, _CONTEXT, *_plugin_rules(), _ENTROPY)


def _spans(text: str) -> list[tuple[int, int]]:
    """The merged spans of every secret in ``text``."""
    found: list[tuple[int, int]] = []
    for rule in _RULES:
        for m in rule.pattern.finditer(text):
            span = rule.span(m)
            if span is not None and span[1] > span[0]:
                found.append(span)
    if not found:
        return []
    found.sort()
    merged = [found[0]]
    for start, end in found[1:]:
        last_start, last_end = merged[-1]
        if start <= last_end:
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    # a span may cover an earlier [REDACTED] only partly (entropy over "x[REDACTED]y" cannot, but be safe)
    return [(s, e) for s, e in merged if text[s:e] != REDACTED]


_CACHE_MAX_CHARS = 16_384


@lru_cache(maxsize=1024)
def _redact_cached(text: str) -> str:
    return _redact(text)


def _redact(text: str) -> str:
    spans = _spans(text)
    if not spans:
        return text
    out, last = [], 0
    for start, end in spans:
        out += [text[last:start], REDACTED]
        last = end
    out.append(text[last:])
    return "".join(out)


def redact_secrets(text: str) -> str:
    """Replace API keys, tokens, passwords, private keys and URL credentials in ``text`` with ``[REDACTED]``."""
    if not text:
        return text
    return _redact_cached(text) if len(text) <= _CACHE_MAX_CHARS else _redact(text)


def find_secrets(text: str) -> list[str]:
    """The secret strings themselves (without the "password is" around them), so they can be scrubbed elsewhere.

    A model shown the redacted turn can still be handed (or guess) a bare value; :func:`scrub` removes these
    literals from whatever it returns, even where no marker word is left to recognise them by.
    """
    found: list[str] = []
    for start, end in _spans(text or ""):
        secret = text[start:end].strip().strip("\"'")
        for literal in (secret, secret.rstrip(".!?:)")):
            if len(literal) >= 3 and literal not in found:
                found.append(literal)
    return found


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``redact_secrets`` plus every literal in ``secrets`` (longest first) replaced by ``[REDACTED]``."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return redact_secrets(text)


def contains_secret(text: str | None) -> bool:
    """True when ``text`` holds something :func:`redact_secrets` would replace."""
    return bool(text) and redact_secrets(text) != text


def key_holds_secret(key: str | None, secrets: Iterable[str] = ()) -> bool:
    """True when a memory key (``project:category:entity``) holds a secret: one of the literal ``secrets``, or a
    segment that is one on its own (``acme:tooling:ghp_...``). Segments are read alone, so a key about passwords
    (``acme:password:admin``) is not mistaken for "password: admin"."""
    if not key:
        return False
    return any(s and s in key for s in secrets) or any(contains_secret(part) for part in key.split(":"))


# --- structured values: messages, state, checkpoints ---------------------------------------------------------------
# identifiers are never rewritten: a message id that looks random must stay the id add_messages merges by
_KEEP_KEYS = frozenset({"id", "tool_call_id", "run_id", "type", "name", "lc", "response_metadata", "usage_metadata"})
# content blocks that carry media (base64 data would look like one long high-entropy secret)
_MEDIA_BLOCKS = frozenset({"image", "image_url", "file", "audio", "input_audio", "video"})
MAX_DEPTH = 64


def redact_value(value: Any, _depth: int = 0) -> Any:
    """A copy of ``value`` with every string redacted: strings, lists, tuples, dicts, pydantic models (LangChain
    messages among them: content, tool-call arguments, additional kwargs). Ids, names and types are kept, and so
    are media content blocks and ``data:`` URLs; objects of other types, and anything nested deeper than
    ``MAX_DEPTH``, are returned as they are. Unchanged parts are
    returned as the same objects (nothing is copied when nothing is redacted)."""
    if isinstance(value, str):
        return value if value.startswith("data:") and ";base64," in value[:200] else redact_secrets(value)
    if _depth >= MAX_DEPTH or value is None or isinstance(value, int | float | bool | bytes):
        return value
    depth = _depth + 1
    if isinstance(value, dict):
        if value.get("type") in _MEDIA_BLOCKS:
            return value
        out = {k: v if k in _KEEP_KEYS else redact_value(v, depth) for k, v in value.items()}
        return value if all(out[k] is value[k] for k in value) else type(value)(out) if type(value) is dict else out
    if isinstance(value, list | tuple):
        items = [redact_value(v, depth) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else type(value)(items) if type(value) is tuple else tuple(items)
    model_fields = getattr(type(value), "model_fields", None)
    if isinstance(model_fields, dict) and hasattr(value, "model_copy"):
        update = {}
        for name in model_fields:
            if name in _KEEP_KEYS:
                continue
            old = getattr(value, name, None)
            new = redact_value(old, depth)
            if new is not old:
                update[name] = new
        return value.model_copy(update=update) if update else value
    return value
