"""第 1.2 节“三种切分”的状态：同一段文字按字、按词（jieba）、按字节级 BPE 切分，以及序列长度与词表大小。"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from seqlab import corpus
from seqlab.errors import InputError
from seqlab.states import clean_text
from seqlab.tokenize import (
    BPE_SIZES,
    UNK,
    book_bpe,
    book_char_tokenizer,
    book_word_tokenizer,
    corpus_lengths,
    is_whole_chars,
    piece_bytes,
    segmenter_words,
)

MAX_CHARS = 60


@dataclass(frozen=True)
class Row:
    """一种切分方式的结果（长度都是 token 数 n）。``starts``/``widths`` 以“字”为单位，画图时让三行上下对齐。"""

    label: str
    vocab_size: int
    tokens: list[str]
    ids: list[int]
    starts: list[float]
    widths: list[float]
    kinds: list[str]  # "even" / "odd"（相邻 token 交替）、"partial"（不是整字的字节碎片）、"unk"


@dataclass(frozen=True)
class TokenizerState:
    text: str
    vocab_size: int  # 当前选中的 BPE 词表大小（BPE_SIZES 之一）
    rows: list[Row]  # 字、词、BPE 三行
    bpe_sizes: list[int]  # 各个 BPE 的实际词表大小（按 BPE_SIZES）
    bpe_lengths: list[int]  # 这段文字在各个 BPE 下的 token 数
    corpus_lengths: list[float]  # 语料里平均每句的 BPE token 数（按 BPE_SIZES）


def _alternate(n: int) -> list[str]:
    return ["even" if k % 2 == 0 else "odd" for k in range(n)]


def _vocab_kinds(ids: list[int], unk_id: int) -> list[str]:
    """字、词两行的颜色种类：交替的两种，``<unk>`` 单独一种。"""
    return ["unk" if i == unk_id else k for i, k in zip(ids, _alternate(len(ids)))]


def _char_row(text: str) -> Row:
    tok = book_char_tokenizer()
    ids = tok.encode(text)
    kinds = _vocab_kinds(ids, tok.vocab.unk_id)
    return Row("字", tok.vocab_size, tok.tokenize(text), ids, list(range(len(text))), [1.0] * len(text), kinds)


def _word_row(text: str) -> Row:
    tok = book_word_tokenizer()
    words = tok.tokenize(text)
    ids = tok.vocab.encode(words)
    starts: list[float] = []
    pos = 0
    for w in words:
        starts.append(pos)
        pos += len(w)
    kinds = _vocab_kinds(ids, tok.vocab.unk_id)
    return Row("词（jieba）", tok.vocab_size, words, ids, starts, [float(len(w)) for w in words], kinds)


def _bpe_row(text: str, vocab_size: int) -> Row:
    """字节级 BPE 的一行：一个汉字占 3 个字节，每个字节算 1/3 个字宽。"""
    tok = book_bpe(vocab_size)
    enc = tok.backend.encode(text)
    # 每个字节在“字”坐标上的宽度
    byte_width = [1.0 / len(ch.encode("utf-8")) for ch in text for _ in ch.encode("utf-8")]
    starts: list[float] = []
    widths: list[float] = []
    kinds: list[str] = []
    pos, b = 0.0, 0
    for k, piece in enumerate(enc.tokens):
        raw = piece_bytes(piece)
        w = sum(byte_width[b : b + len(raw)])
        starts.append(pos)
        widths.append(w)
        kinds.append(("even" if k % 2 == 0 else "odd") if is_whole_chars(raw) else "partial")
        pos += w
        b += len(raw)
    return Row(f"BPE（{vocab_size}）", tok.vocab_size, tok.tokenize(text), list(enc.ids), starts, widths, kinds)


@lru_cache(maxsize=1)
def corpus_curve() -> tuple[list[int], list[float]]:
    """语料里平均每句的 BPE token 数（按 ``BPE_SIZES``）：``(实际词表大小, 平均 token 数)``。"""
    sentences = corpus.book_corpus()
    return [book_bpe(v).vocab_size for v in BPE_SIZES], [corpus_lengths(book_bpe(v), sentences) for v in BPE_SIZES]


def tokenizer_state(text: str, vocab_size: int) -> TokenizerState:
    text = clean_text(text, max_chars=MAX_CHARS, what="文本")
    if vocab_size not in BPE_SIZES:
        raise InputError(f"BPE 词表大小只能取 {BPE_SIZES} 之一。")
    rows = [_char_row(text), _word_row(text), _bpe_row(text, vocab_size)]
    sizes, corpus_means = corpus_curve()
    lengths = [len(book_bpe(v).encode(text)) for v in BPE_SIZES]
    return TokenizerState(text, vocab_size, rows, list(sizes), lengths, list(corpus_means))


def web_data() -> dict[str, Any]:
    """网页实时面计算 ``tokenizer_state`` 所需的常量：字表与词表（``itos``，下标就是 ID）、分词器补的词
    （``segmenter_words``，网页上的 jieba-wasm 照样补上）、每个 BPE 的 tokenizer.json（Hugging Face ``tokenizers``
    的原样，浏览器里的 tokenizers.js 由它建出同一个分词器），以及与文字无关的语料曲线 ``corpus_curve``。"""
    sizes, means = corpus_curve()
    return {
        "max_chars": MAX_CHARS,
        "unk": UNK,
        "char_itos": book_char_tokenizer().vocab.itos,
        "word_itos": book_word_tokenizer().vocab.itos,
        "segmenter_words": segmenter_words(),
        "bpe_sizes": BPE_SIZES,
        "bpe": {str(v): json.loads(book_bpe(v).backend.to_str()) for v in BPE_SIZES},
        "corpus_sizes": sizes,
        "corpus_lengths": means,
    }
