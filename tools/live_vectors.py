"""写出网页实时面的测试向量：每个有网页实时面的探索器一份 ``_build/live-vectors/<名字>.json``。

另写三份共用部分的对照：``shared/segment.json``（网页上的分词——jieba-wasm 加本书补的词——与 Python 的 jieba）、
``shared/bpe.json``（网页上的字节级 BPE——tokenizers.js 读本书的 tokenizer.json——与 Python 的 ``tokenizers``，
每个词表大小下的切分）与 ``shared/random.json``（``assets/live/random.mjs`` 与 Python 的 ``random.Random``）；
以及小 GPT 采样的对照 ``gpt_steps/sampling.json``（温度与 top-k 的分布、逆 CDF 采样、许多组设置下的整次采样生成）。

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

from seqlab import corpus, explorers, figures, gpt, states, tokenize
from seqlab.errors import InputError
from seqlab.explorers import web
from seqlab.states import gpt_steps
from seqlab.states.tokenizer import tokenizer_state

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
    _write(out / "shared" / "bpe.json", bpe_vectors())
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


# 字节级 BPE 的难输入（在文本框的难输入之外）：预切分的正则在 Python（Rust 的 Oniguruma）与 JavaScript 里
# 对“字母 / 数字 / 空白”的看法可能不同的字符，以及会被切成字节碎片的字
BPE_EDGES = (
    "it's we'll they're I've I'm he'd 'S",
    "  多个   空格\t制表\n换行\r\n  ",
    "123 4567 ８９ 一二三 ½ Ⅻ x²³ ٣",
    "零宽\u200b连接\u200d行\u2028段\u2029不换行\xa0空格\u3000全角\x85下一行\x0b\x0c",
    "今\ufeff天",
    "👨\u200d👩\u200d👧\u200d👦 🇨🇳🇺🇸 👍🏽 1\ufe0f\u20e3 ❤️",
    "e\u0301 Tiếng Việt Ångström",
    "مرحبا שלום नमस्ते สวัสดี 안녕하세요 こんにちは カタカナ Привет Ελλάδα",
    "㐀䶵𠀀𪜀𫝀𫠠𬺰𰀀𱍐𲎯",
    "\ue000\U000f0000\U000e0041\uffff\x00\x01\x7f",
    "𝐀𝐁𝐂 ℌ ﬁ ＡＢＣ",
    "——……「」『』《》 Hello, World! (x+y)*2=? #@$%^&~`",
)


def bpe_vectors(slices: int = 300, seed: int = 1) -> dict:
    """字节级 BPE 的对照：本书语料的每一句、跨句的随机片段、文本框与 BPE 的难输入，各自附上 Python 在每个词表大小下
    切出的 token 字符串、ID、给人看的 token 与是否整字（``is_whole_chars``）。网页读的 tokenizer.json 在探索器 tokenizer
    的说明里（``tokenizer.json`` 的 ``spec.data.bpe``），node 测试用的正是那一份。"""
    sentences = list(corpus.book_corpus())
    text, rng = "".join(sentences), random.Random(seed)
    pieces = [text[i : i + rng.randint(1, 80)] for i in (rng.randrange(len(text)) for _ in range(slices))]
    texts = sentences + pieces + list(web.TEXT_EDGES) + list(BPE_EDGES)
    cases = []
    for t in texts:
        sizes = {}
        for v in tokenize.BPE_SIZES:
            tok = tokenize.book_bpe(v)
            enc = tok.backend.encode(t)
            whole = [tokenize.is_whole_chars(tokenize.piece_bytes(p)) for p in enc.tokens]
            sizes[str(v)] = {"pieces": enc.tokens, "ids": enc.ids, "tokens": tok.tokenize(t), "whole": whole}
        cases.append([t, sizes])
    # 不在 BPE_SIZES 里的词表大小：网页控件给不出来，但两道检查（Param.check 与状态函数自己的）都要与 Python 说得一样
    param, bad_sizes = explorers.get("tokenizer").param("vocab_size"), []
    for size in (512, 0, "300"):
        bad_sizes.append({"vocab_size": size, "param": _message(param.check, size),
                          "state": _message(tokenizer_state, "苹果", size)})
    # 整个实时面在这些难输入上的状态与说明（词表大小轮流取）：字、词两行与 BPE 一行拼在一起也与 Python 相同
    explorer, faces = explorers.get("tokenizer"), []
    for k, t in enumerate(BPE_EDGES):
        current = explorer.compute(text=t, vocab_size=tokenize.BPE_SIZES[k % len(tokenize.BPE_SIZES)])
        faces.append({"raw": {"text": t, "vocab_size": current.vocab_size}, "state": states.to_json(current),
                      "caption": explorer.caption(current)})
    return {"cases": cases, "bad_sizes": bad_sizes, "faces": faces}


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


def _message(function, *args) -> str:
    """``function(*args)`` 拒绝时的中文消息。"""
    try:
        function(*args)
    except InputError as err:
        return str(err)
    raise AssertionError(f"{function.__name__}{args} 应当拒绝")


def _write(target: Path, value: object) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(value, ensure_ascii=False, allow_nan=False), encoding="utf-8")
    print(f"{target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
