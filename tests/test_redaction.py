"""The secret detector itself (``z0_memory.redaction``): each shape an outside probe found missed, in English and in
Chinese text, the prose it must leave alone, and what the rest of the package builds on (find_secrets, scrub,
idempotence, speed). No database: these run in milliseconds.

Chinese text is the hard case for a regex detector: CJK characters are word characters, so ``\\b`` never fires
between ``这个`` and ``sk-proj-...``; the detector must find a key written directly against Chinese text.
"""

from __future__ import annotations

import time

import pytest

from z0_memory.redaction import (
    REDACTED,
    contains_secret,
    find_secrets,
    key_holds_secret,
    redact_secrets,
    redact_value,
    scrub,
)

PGP_BODY = "lQOYBGR0nmQBCADJ8m2p4QzW9sXk3LrT7uVb1yHcE5aNfG6jKq0oPd2iS8eR4tY7wU9xZ3vB1nM5lK"
AZURE_KEY = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6QUJDRA1234567890abcdEFGH+/w=="

# name -> (the secret, how it is written; "{s}" is where the secret goes)
SHAPES: dict[str, tuple[str, str]] = {
    "openai_project_key": ("sk-proj-Q8f3kLm2Zx9Tt4Rr7Yy1Uu6Ii0Oo5Pp", "{s}"),
    "github_token": ("ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "{s}"),
    "huggingface_token": ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "{s}"),
    "npm_token": ("npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "{s}"),
    "google_oauth_token": ("ya29.a0AfH6SMBx3kQ_exampleTOKENvalue1234567890abcdefg", "{s}"),
    "azure_account_key": (AZURE_KEY, ("DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};"
                                      "EndpointSuffix=core.windows.net")),
    "url_password_with_slash_and_at": ("pa/ss@w0rd!x", "postgresql://app:{s}@db.internal:5432/app"),
    "json_password": ("correct horse battery staple", '{{"user": "app", "password": "{s}"}}'),
    "pgp_private_key": (PGP_BODY, ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{s}\n=Ab12\n"
                                   "-----END PGP PRIVATE KEY BLOCK-----")),
    "aws_access_key_id": ("AKIAIOSFODNN7EXAMPLE", "{s}"),
    "slack_token": ("xoxb-123456789012-abcdefghijkl", "{s}"),
    "stripe_live_key": ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "{s}"),
    "sendgrid_key": ("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", "{s}"),
    "twilio_key": ("SK0123456789abcdef0123456789abcdef", "{s}"),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "{s}"),
    "high_entropy_bare_string": ("q7Xv2LpZ9mK4tR8wN3bY6cJ1hF5dG0sA", "{s}"),
}
CONTEXTS = {
    "english": ("Please call the staging API with {x} today.", ("Please call the staging API with", "today.")),
    "chinese": ("请用这个{x}调用接口", ("请用这个", "调用接口")),
}


@pytest.mark.parametrize("language", sorted(CONTEXTS))
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_secret_shape_is_redacted_in_english_and_chinese(shape, language):
    secret, written = SHAPES[shape]
    sentence, kept = CONTEXTS[language]
    text = sentence.format(x=written.format(s=secret))
    out = redact_secrets(text)
    assert secret not in out, out
    assert REDACTED in out
    for part in kept:  # the rest of the sentence is left as it was
        assert part in out, out
    assert any(secret in found or found in secret for found in find_secrets(text) if len(found) >= 8)
    assert contains_secret(text)


@pytest.mark.parametrize("text, secret", [
    ("我们决定用 Redis 做缓存，密码是 密钥值Abc12345", "密钥值Abc12345"),
    ("数据库password是hunter2-Very-Secret，记得轮换", "hunter2-Very-Secret"),
    ("令牌：abc123XYZ789，下周过期", "abc123XYZ789"),
    ("the GitHub token is ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8.", "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
    ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ('config = {"apiKey": "9f8e7d6c5b4a3210", "region": "eu"}', "9f8e7d6c5b4a3210"),
    ("accessToken: Xy12Ab34Cd56Ef78", "Xy12Ab34Cd56Ef78"),
    ("DB_PASSWORD_VALUE=plainwords", "plainwords"),
    ("the admin password for the db is Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("redis://:s3cr3t/pw@cache:6379/0", "s3cr3t/pw"),
    ("Authorization: Bearer abc.def123.ghi456jkl", "abc.def123.ghi456jkl"),
    ("//registry.npmjs.org/:_authToken=npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "npm_AbCdEfGhIjKlMnOpQrStUvWxYz"),
    ("https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&sig=Ab12Cd34Ef56Gh78Ij90KlMnOp%2Bq%3D", "Ab12Cd34Ef56Gh78"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----",
     "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"),
    ("私钥：-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7s9d2k\n（没有结尾）", "MIIEowIBAAKCAQEA7s9d2k"),
])
def test_context_rules_in_both_languages(text, secret):
    out = redact_secrets(text)
    assert secret not in out, out
    assert REDACTED in out


@pytest.mark.parametrize("prose", [
    "the token budget is 3000",
    "our secret sauce is caching",
    "keep the api key rotation weekly",
    "the password policy needs twelve characters",
    "the password is stored in Vault, the token is required for every call",
    "what is the password? 密码是什么？",
    "set max_tokens: 4096 and the tokenizer: cl100k_base",
    "commit 3f9a2c4e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed it, request 123e4567-e89b-12d3-a456-426614174000",
    "see z0_memory/offline/extractor.py and tests/test_reliability_secrets.py",
    "UserProfileSettingsController2Factory extends BaseController",
    "we pin langchain-openai>=1.0 and langgraph-checkpoint-postgres==3.2.0",
    "https://docs.python.org/3/library/re.html#module-re and ssh://git@github.com/org/repo.git",
    "mail alice@example.com or bob@corp.io; the server is at 10.0.0.12:5432",
    "使用 PostgreSQL 16 和 pgvector 做向量检索，令牌桶算法限流，密码学课程在周三",
    "密钥是否需要轮换？令牌是不是过期了？密码为什么不对？",
    "the basic plan costs $10 and bearer bonds are old",
    "we use scikit-learn and sk-learn-style pipelines",
    "in CI: token: ${GITHUB_TOKEN}, password=$DB_PASSWORD, api_key: <your-api-key>, secret: {{ vault.secret }}",
])
def test_prose_is_left_alone(prose):
    assert redact_secrets(prose) == prose
    assert not contains_secret(prose)


def test_redaction_is_idempotent_and_scrub_removes_literals():
    text = "password is hunter2-Very-Secret, 请用这个sk-proj-Q8f3kLm2Zx9Tt4Rr7Yy1Uu6Ii0Oo5Pp调用"
    once = redact_secrets(text)
    assert redact_secrets(once) == once
    found = find_secrets(text)
    assert "hunter2-Very-Secret" in found and "sk-proj-Q8f3kLm2Zx9Tt4Rr7Yy1Uu6Ii0Oo5Pp" in found
    # a model handed back the bare value where no marker word is left to recognise it by
    assert scrub("the value was hunter2-Very-Secret", found) == f"the value was {REDACTED}"


def test_a_key_holds_a_secret_by_its_segments():
    assert key_holds_secret("acme:tooling:ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8")
    assert key_holds_secret("acme:tooling:hunter2_deploy", ["hunter2"])  # a literal said in the turn
    for key in ("acme:stack:ci", "acme:password:admin", "acme:convention:api_key_rotation", None):
        assert not key_holds_secret(key), key


def test_redact_value_walks_messages_models_and_containers_but_keeps_ids():
    from langchain_core.messages import AIMessage, HumanMessage

    key = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    msg_id = "chatcmpl-9XyZaBcDeFgHiJkLmNoPqRsTuV12345"  # looks random: an id must never be rewritten
    value = {"messages": [HumanMessage(f"use {key}", id=msg_id),
                          AIMessage("", id="a1", tool_calls=[{"name": "t", "args": {"q": key}, "id": "call_1"}])],
             "question": f"token: {key}", "n": 3}
    out = redact_value(value)
    assert key not in repr(out)
    assert out["messages"][0].id == msg_id and out["messages"][0].content == f"use {REDACTED}"
    assert out["messages"][1].tool_calls[0]["args"]["q"] == REDACTED and out["n"] == 3
    assert key in value["messages"][0].content  # the input is not modified
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB" * 4}}
    assert redact_value([image]) == [image]  # media is not text: its base64 would look like a secret


def test_redaction_is_fast_enough_for_every_turn():
    """It runs on every turn, every candidate and every checkpoint write: a 1.5 KB turn in 1-2.5 ms here (a short
    one in 0.07 ms; a text seen before is a cache hit); the bound leaves room for a loaded machine."""
    base = ("We decided to deploy on Fly.io with Postgres 16; the CI runs pytest and the key is stored in Vault. "
            "我们决定用 Redis 做缓存，下周评审。") * 12
    texts = [f"{base} {i}" for i in range(200)]  # distinct texts: no cache hit
    started = time.perf_counter()
    for text in texts:
        redact_secrets(text)
    per_turn_ms = (time.perf_counter() - started) * 1000 / len(texts)
    assert per_turn_ms < 10, per_turn_ms
