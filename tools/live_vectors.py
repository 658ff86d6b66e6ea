"""写出网页实时面的测试向量：每个有网页实时面的探索器一份 ``_build/live-vectors/<名字>.json``。

另写两份共用部分的对照：``shared/segment.json``（网页上的分词——jieba-wasm 加本书补的词——与 Python 的 jieba）
与 ``shared/random.json``（``assets/live/random.mjs`` 与 Python 的 ``random.Random``）；以及小 GPT 采样的对照
``gpt_steps/sampling.json``（温度与 top-k 的分布、逆 CDF 采样、许多组设置下的整次采样生成）。

每份里是写进网站的说明（``seqlab.explorers.web.spec``）和一组用例：网页控件给出的原样取值（随机的、边界的、坏的），
以及 Python 的结果——状态（``states.to_json``）、整张图与说明，或者读者看到的中文消息。
``tests/js/live.test.mjs``（``node --test``）要求浏览器里的计算与它们一致。用法：``python tools/live_vectors.py [输出文件夹]``。
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import torch

from seqlab import corpus, explorers, figures, gpt, tokenize
from seqlab.explorers import web
from seqlab.states import gpt_steps

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "_build" / "live-vectors"


def main(out: Path = OUT) -> None:
    figures.use_book_defaults()  # 与构建网站时相同的模板，说明里的图与网站上的一样
    out.mkdir(parents=True, exist_ok=True)
    for explorer in explorers.all_explorers():
        if explorer.web is None:
            continue
        _write(out / f"{explorer.name}.json", web.vectors(explorer))
    _write(out / "shared" / "segment.json", segment_vectors())
    _write(out / "shared" / "random.json", random_vectors())
    _write(out / "gpt_steps" / "sampling.json", gpt_sampling_vectors())


def segment_vectors(slices: int = 300, seed: int = 0) -> dict:
    """分词的对照：本书语料的每一句、跨句的随机片段与文本框的难输入，各自附上 Python 的 jieba 切分。"""
    sentences = list(corpus.book_corpus())
    text, rng = "".join(sentences), random.Random(seed)
    pieces = [text[i : i + rng.randint(1, 80)] for i in (rng.randrange(len(text)) for _ in range(slices))]
    texts = sentences + pieces + list(web.TEXT_EDGES)
    return {"words": tokenize.segmenter_words(), "cases": [[t, tokenize.segment(t)] for t in texts]}


# 种子：小的、0、一个汉字与基本平面以外的字的码位、超过 32 位与 64 位的整数
RANDOM_SEEDS = (0, 1, 6, 99, ord("狗"), ord("𠀀"), 2**32 + 5, 2**70 + 3)


def random_vectors() -> list[dict]:
    """每个种子下 Python 的 ``random.Random`` 给出的：前几个 ``random()``、``getrandbits``、``_randbelow``、
    ``shuffle`` 与 ``gauss``（各从一个新播种的生成器开始）。"""
    cases = []
    for seed in RANDOM_SEEDS:
        rng = [random.Random(seed) for _ in range(5)]
        cases.append({
            "seed": str(seed),  # 超过 2⁵³ 的整数在 JSON 里会失真，写成文字
            "random": [rng[0].random() for _ in range(700)],  # 超过 624 个：状态至少重算一次
            "getrandbits": [rng[1].getrandbits(k) for k in (1, 5, 16, 31, 32) * 3],
            "randbelow": [rng[2]._randbelow(n) for n in (1, 2, 3, 7, 16, 100, 1000, 2**31 + 1) * 3],
            "shuffle": [_shuffled(rng[3], n) for n in (2, 3, 5, 8, 16, 40)],
            "gauss": [rng[4].gauss(0.0, 1.0) for _ in range(25)],
        })
    return cases


def _shuffled(rng: random.Random, n: int) -> list[int]:
    x = list(range(n))
    rng.shuffle(x)
    return x


def gpt_sampling_vectors(runs: int = 60, seed: int = 0) -> dict:
    """小 GPT 采样的对照（``assets/live/gpt_steps.mjs``）。

    * ``probs``：``gpt.next_token_probs`` 在随机的与有并列值的 float64 logits 上、几组温度与 top-k 下的分布；
    * ``picks``：``gpt.sample_index`` 在这些分布上对一串 ``u``（含 0 与紧贴 1 的）选出的下标；
    * ``runs``：语料里随机的短提示、随机的温度、top-k 与种子，采样生成到最后一步的文字与步数（每一步选出的字都在里面）。
    """
    rng = random.Random(seed)
    logits = [[rng.gauss(0, 2) for _ in range(12)] for _ in range(6)]
    logits += [[1.0, 2.0, 2.0, 0.5, 2.0, -1.0, 2.0], [0.0] * 5, [3.0, 3.0, 1.0, 1.0, 1.0, -2.0]]  # 并列的值
    us = [0.0, 0.1, 0.5, 0.9, 0.999, 1 - 2**-53] + [rng.random() for _ in range(20)]
    probs, picks = [], []
    for z in logits:
        for temperature in (0.3, 1.0, 1.7):
            for k in sorted({1, 2, 3, len(z) // 2, len(z)}):
                q = gpt.next_token_probs(torch.tensor(z, dtype=torch.float64), temperature, k)
                probs.append({"logits": z, "temperature": temperature, "top_k": k, "q": q.tolist()})
                picks.append({"q": q.tolist(), "u": us, "index": [gpt.sample_index(q, u) for u in us]})
    text = "".join(corpus.book_corpus())
    cases = []
    for _ in range(runs):
        start = rng.randrange(len(text) - 8)
        raw = {"prompt": text[start : start + rng.randint(1, 8)], "step": gpt_steps.MAX_STEPS - 1, "sample": True,
               "temperature": round(rng.uniform(0.1, 2.0), 1), "top_k": rng.randint(1, 20), "seed": rng.randint(0, 99)}
        state = gpt_steps.gpt_step_state(**raw)  # 语料里的字模型都认识
        cases.append({"raw": raw, "text": state.text, "last": state.last})
    return {"probs": probs, "picks": picks, "runs": cases}


def _write(target: Path, value: object) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(value, ensure_ascii=False, allow_nan=False), encoding="utf-8")
    print(f"{target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
