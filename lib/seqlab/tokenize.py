"""第 1.2 节：把文本切成 token，再给每个 token 一个整数 ID。

三种切分方式，接口相同（``tokenize`` / ``encode`` / ``decode`` / ``vocab_size``）：

* ``CharTokenizer``：一个字一个 token；
* ``WordTokenizer``：用真实的中文分词器 jieba 切成词；
* ``ByteBPETokenizer``：用 Hugging Face ``tokenizers`` 在本书语料上训练的字节级 BPE
  （byte-level BPE：Sennrich 等人 2016 年的子词 BPE，加上 GPT-2 式的字节字母表）。

前两种的词表是封闭的：语料里没见过的字或词只能映射到 ``<unk>``，解码时原文就丢了。
字节级 BPE 的初始字母表是全部 256 个字节，任何 UTF-8 文本都能无损地编码、再解码回来；
代价是一个汉字（3 个字节）在词表小的时候会被拆成不是整字的碎片，序列因此变长。

本模块只依赖 jieba 和 tokenizers，不导入 torch、plotly 或 ipywidgets。
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache, lru_cache

PAD = "<pad>"
UNK = "<unk>"
MASK = "<mask>"

# 训练 BPE 时尝试的几个词表大小。256 = 只有单字节，没有任何合并。
BPE_SIZES = (256, 300, 400, 600, 1000, 2000)


# ---------------------------------------------------------------- 词表
class Vocab:
    """token ↔ ID 的双向表。``itos[i]`` 是 ID 为 ``i`` 的 token，``stoi`` 是它的反查表。

    特殊 token 排在最前面（``<pad>`` = 0、``<unk>`` = 1……），其余 token 按出现次数从多到少排，
    次数相同的按第一次出现的先后排。ID 的大小因此只反映“排序规则”，与意思毫无关系。
    """

    def __init__(self, tokens: Iterable[str], specials: Sequence[str] = (PAD, UNK)):
        if UNK not in specials:
            raise ValueError("specials 里必须有 <unk>")
        counts = Counter(tokens)  # Counter 保留第一次出现的顺序，most_common 对同频者稳定
        self.itos: list[str] = list(specials) + [t for t, _ in counts.most_common() if t not in specials]
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}
        self.counts = counts

    @classmethod
    def from_itos(cls, itos: Sequence[str]) -> Vocab:
        """由保存下来的 ``itos`` 列表（例如检查点里的）原样重建词表。"""
        vocab = cls.__new__(cls)
        vocab.itos = list(itos)
        vocab.stoi = {t: i for i, t in enumerate(vocab.itos)}
        vocab.counts = Counter()
        return vocab

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    @property
    def unk_id(self) -> int:
        return self.stoi[UNK]

    def encode(self, tokens: Iterable[str]) -> list[int]:
        """token 列表 → ID 列表；词表外的 token 变成 ``<unk>`` 的 ID。"""
        unk = self.unk_id
        return [self.stoi.get(t, unk) for t in tokens]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """ID 列表 → token 列表；越界的 ID 抛出 ``ValueError``。"""
        out = []
        for i in ids:
            if not 0 <= int(i) < len(self.itos):
                raise ValueError(f"ID {i} 不在词表里（词表大小 {len(self.itos)}）")
            out.append(self.itos[int(i)])
        return out


# ---------------------------------------------------------------- 查词表的分词器：字级与词级
class VocabTokenizer:
    """先切成 token、再查词表的分词器；子类给出 ``tokenize`` 与词表 ``vocab``。"""

    name: str
    vocab: Vocab

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def tokenize(self, text: str) -> list[str]:
        raise NotImplementedError

    def encode(self, text: str) -> list[int]:
        return self.vocab.encode(self.tokenize(text))

    def decode(self, ids: Iterable[int]) -> str:
        return "".join(self.vocab.decode(ids))


class CharTokenizer(VocabTokenizer):
    """一个字（Unicode 码位）一个 token。"""

    name = "字"

    def __init__(self, sentences: Iterable[str]):
        self.vocab = Vocab(ch for s in sentences for ch in s)

    def tokenize(self, text: str) -> list[str]:
        return list(text)


# ---------------------------------------------------------------- 词级（jieba）
# 分词器的用户词典：真实系统也会给分词器补充领域词汇。
USER_WORDS = ("小王", "小李", "长诗", "读后感")
# 「苹果公司」在 jieba 的默认词典里是一个词。我们让它切成「苹果」「公司」，
# 这样「苹果」在「苹果公司」和「吃苹果」里是同一个 token（第 1.2 节的例子需要这一点）。
SPLIT_WORDS = (("苹果", "公司"),)


@lru_cache(maxsize=1)
def segmenter():
    """本书专用的 jieba 分词器实例（不改动 jieba 的全局默认分词器）。"""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    tk = jieba.Tokenizer()
    tk.initialize()
    for word in USER_WORDS:
        tk.add_word(word, freq=50_000)
    for parts in SPLIT_WORDS:
        tk.suggest_freq(parts, tune=True)
    return tk


def segmenter_words() -> list[tuple[str, int]]:
    """本书分词器在 jieba 默认词典之外补上或调过词频的词，以及它们现在的词频：网页上的 jieba-wasm
    （``assets/live/segment.mjs``）照样补上，两边才切得一样。"""
    tk = segmenter()
    words = [*USER_WORDS, *("".join(parts) for parts in SPLIT_WORDS)]
    return [(word, tk.FREQ[word]) for word in words]


def segment(text: str) -> list[str]:
    """用 jieba（精确模式，关闭 HMM 新词发现，结果更稳定）把文本切成词。"""
    return segmenter().lcut(text, HMM=False)


class WordTokenizer(VocabTokenizer):
    """一个词一个 token，词由 jieba 切出。词表外的词映射为 ``<unk>``。"""

    name = "词（jieba）"

    def __init__(self, sentences: Iterable[str], specials: Sequence[str] = (PAD, UNK, MASK)):
        self.vocab = Vocab((w for s in sentences for w in segment(s)), specials=specials)

    def tokenize(self, text: str) -> list[str]:
        return segment(text)


# ---------------------------------------------------------------- 字节级 BPE
@lru_cache(maxsize=1)
def byte_alphabet() -> dict[str, int]:
    """字节级 BPE 用来“显示”字节的 256 个可见字符 → 它们代表的字节值（GPT-2 的约定）。

    可打印的 ASCII 与 Latin-1 字节用自己，其余字节依次映射到 U+0100 之后的字符，
    所以 token 字符串里的 ``æ``、``Ī`` 之类其实各代表一个字节。
    """
    visible = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars = list(visible)
    extra = 0
    for b in range(256):
        if b not in visible:
            visible.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(visible, chars)}


def piece_bytes(piece: str) -> bytes:
    """字节级 BPE 的一个 token 字符串 → 它代表的原始字节。"""
    table = byte_alphabet()
    return bytes(table[ch] for ch in piece)


def show_bytes(raw: bytes) -> str:
    """把一段字节写成读者看得懂的样子：完整的 UTF-8 字符照常显示，
    不完整的字节用十六进制写在 ‹ › 里，例如「已」的前两个字节显示为 ``‹e5 b7›``。"""
    out: list[str] = []
    hexes: list[str] = []
    i = 0

    def flush():
        if hexes:
            out.append("‹" + " ".join(hexes) + "›")
            hexes.clear()

    while i < len(raw):
        b = raw[i]
        n = 1 if b < 0x80 else 2 if b >> 5 == 0b110 else 3 if b >> 4 == 0b1110 else 4 if b >> 3 == 0b11110 else 0
        chunk = raw[i : i + n] if n else b""
        try:
            ch = chunk.decode("utf-8") if n and len(chunk) == n else None
        except UnicodeDecodeError:
            ch = None
        if ch is None:
            hexes.append(f"{b:02x}")
            i += 1
            continue
        flush()
        out.append(ch if ch.isprintable() else repr(ch)[1:-1])
        i += n
    flush()
    return "".join(out)


def is_whole_chars(raw: bytes) -> bool:
    """这段字节是不是恰好由完整的 UTF-8 字符组成。"""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class ByteBPETokenizer:
    """在给定语料上训练的字节级 BPE（Hugging Face ``tokenizers``）。

    * 预切分：GPT-2 的正则把文本切成“字母串 / 数字串 / 标点 / 空白”，BPE 只在这些块内部合并；
      中文没有空格，所以一整串汉字是一个块。
    * 初始字母表：全部 256 个字节，因此永远不需要 ``<unk>``，编码→解码是无损的。
    * ``vocab_size``：256 个字节 + 合并产生的新 token。语料太小、可合并的对用完时，
      实际词表会比要求的小（``vocab_size`` 属性给出实际值）。
    """

    def __init__(self, sentences: Iterable[str], vocab_size: int, *, pre_split: bool = True):
        """``pre_split=False`` 关掉预切分的正则（只为对照：那样合并会跨过标点和空格）。"""
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

        if vocab_size < 256:
            raise ValueError("字节级 BPE 的词表至少要有 256 个 token（全部单字节）")
        self.requested = vocab_size
        self.name = f"BPE（{vocab_size}）"
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=pre_split)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        tok.train_from_iterator(list(sentences), trainer)
        self.backend = tok

    @property
    def vocab_size(self) -> int:
        return self.backend.get_vocab_size()

    def pieces(self, text: str) -> list[str]:
        """BPE 内部的 token 字符串（每个字符代表一个字节，见 ``byte_alphabet``）。"""
        return self.backend.encode(text).tokens

    def tokenize(self, text: str) -> list[str]:
        """给人看的 token：完整的字照常显示，半个字用 ‹十六进制› 显示。"""
        return [show_bytes(piece_bytes(p)) for p in self.pieces(text)]

    def encode(self, text: str) -> list[int]:
        return self.backend.encode(text).ids

    def merges(self) -> list:
        """训练学到的合并规则，按学到的先后顺序（编码时也按这个顺序执行）。"""
        import json

        return json.loads(self.backend.to_str())["model"]["merges"]

    def chunks(self, text: str) -> list[tuple[int, int]]:
        """预切分得到的块：每块在原文里的 ``(起, 止)`` 字符位置。合并只在块内部发生。"""
        return [span for _, span in self.backend.pre_tokenizer.pre_tokenize_str(text)]

    def spans(self, text: str) -> list[tuple[int, int]]:
        """每个 token 在原文里覆盖的 ``(起, 止)`` 字符位置（半个字的碎片覆盖它所在的那个字）。"""
        return list(self.backend.encode(text).offsets)

    def decode(self, ids: Iterable[int]) -> str:
        return self.backend.decode([int(i) for i in ids])


# ---------------------------------------------------------------- 本书语料上的分词器
@cache
def book_char_tokenizer() -> CharTokenizer:
    from seqlab.corpus import book_corpus

    return CharTokenizer(book_corpus())


@cache
def book_word_tokenizer() -> WordTokenizer:
    from seqlab.corpus import book_corpus

    return WordTokenizer(book_corpus())


@cache
def book_bpe(vocab_size: int) -> ByteBPETokenizer:
    """在本书语料上训练的字节级 BPE（按词表大小缓存；每个不到 0.1 秒）。"""
    from seqlab.corpus import book_corpus

    return ByteBPETokenizer(book_corpus(), vocab_size)


def corpus_lengths(tokenizer, sentences: Iterable[str]) -> float:
    """语料中平均每句的 token 数。"""
    sentences = list(sentences)
    return sum(len(tokenizer.encode(s)) for s in sentences) / len(sentences)
