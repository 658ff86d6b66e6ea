"""第 1.2 节：三种分词器（字、jieba 词、字节级 BPE）的编码→解码往返与词表性质。"""

import itertools

import pytest

from seqlab import corpus
from seqlab.tokenize import (
    BPE_SIZES,
    MASK,
    PAD,
    UNK,
    ByteBPETokenizer,
    CharTokenizer,
    Vocab,
    book_bpe,
    book_char_tokenizer,
    book_word_tokenizer,
    byte_alphabet,
    corpus_lengths,
    is_whole_chars,
    piece_bytes,
    segment,
    show_bytes,
)

ODD = [
    "😀🙂🚀",  # 4 字节的 emoji
    "𠀀𪚥䶵",  # 扩展区的生僻字（语料里没有）
    "鲲鹏展翅九万里",  # 语料里没见过的常用字
    "  前后有空格  ",
    "换行\n和\t制表符",
    "ASCII and 中文 mixed, 123!",
    "e\u0301 组合字符、零宽\u200b空格",
    "\x00控制字符\x7f",
]


def test_vocab_orders_specials_first_then_by_frequency_and_maps_unknown_to_unk():
    vocab = Vocab(["b", "a", "b", "c", "b", "a"])
    assert vocab.itos == [PAD, UNK, "b", "a", "c"]
    assert vocab.encode(["a", "z"]) == [3, vocab.unk_id]
    assert vocab.decode([2, 4]) == ["b", "c"]
    with pytest.raises(ValueError):
        vocab.decode([5])
    assert Vocab.from_itos(vocab.itos).stoi == vocab.stoi


@pytest.mark.parametrize("text", ["", *corpus.book_corpus()[:50]])
def test_char_and_word_tokenizers_round_trip_text_from_the_corpus(text):
    for tok in (book_char_tokenizer(), book_word_tokenizer()):
        ids = tok.encode(text)
        assert tok.vocab.unk_id not in ids
        assert tok.decode(ids) == text


@pytest.mark.parametrize("text", ODD)
def test_closed_vocabularies_lose_unseen_characters_to_unk(text):
    char = book_char_tokenizer()
    ids = char.encode(text)
    assert len(ids) == len(text)  # 一个字一个 ID，位置不丢
    unseen = [ch for ch in text if ch not in char.vocab]
    assert ids.count(char.vocab.unk_id) == len(unseen)
    if unseen:
        assert char.decode(ids) != text and UNK in char.decode(ids)
    else:
        assert char.decode(ids) == text


@pytest.mark.parametrize("size", BPE_SIZES)
@pytest.mark.parametrize("text", ODD + ["", "这本书我已经读过了", "苹果公司发布了新的手机", "读过😀鲲" * 2500])
def test_byte_level_bpe_round_trips_anything(size, text):
    tok = book_bpe(size)
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    # 每个 token 的字节连起来正好是原文的 UTF-8 编码：没有任何信息丢失
    assert b"".join(piece_bytes(p) for p in tok.pieces(text)) == text.encode("utf-8")


def test_byte_level_bpe_with_no_merges_is_one_token_per_byte():
    tok = book_bpe(256)
    assert tok.vocab_size == 256
    text = "读过😀"
    assert len(tok.encode(text)) == len(text.encode("utf-8")) == 3 + 3 + 4
    assert tok.tokenize("已") == ["‹e5›", "‹b7›", "‹b2›"]


def test_small_bpe_splits_chinese_characters_into_non_character_pieces():
    tok = book_bpe(300)
    raw = [piece_bytes(p) for p in tok.pieces("这本书我已经读过了")]
    assert any(not is_whole_chars(r) for r in raw), "V=300 时应当有不是整字的碎片"
    assert all(is_whole_chars(piece_bytes(p)) for p in book_bpe(2000).pieces("这本书我已经读过了"))


def test_sequence_length_falls_as_the_bpe_vocabulary_grows():
    sentences = corpus.book_corpus()[:200]
    lengths = [corpus_lengths(book_bpe(v), sentences) for v in BPE_SIZES]
    assert all(a > b for a, b in itertools.pairwise(lengths))
    chars = corpus_lengths(book_char_tokenizer(), sentences)
    assert lengths[0] == pytest.approx(3 * chars, rel=0.05)  # 几乎全是 3 字节的汉字与标点


def test_bpe_vocabulary_size_is_capped_by_what_the_corpus_can_merge():
    big = ByteBPETokenizer(corpus.book_corpus()[:50], 5000)
    assert 256 < big.vocab_size < 5000
    with pytest.raises(ValueError):
        ByteBPETokenizer(["abc"], 100)


def test_byte_alphabet_is_a_bijection_onto_all_256_bytes():
    table = byte_alphabet()
    assert len(table) == 256 and sorted(table.values()) == list(range(256))


def test_show_bytes_marks_incomplete_characters():
    raw = "书已".encode()
    assert show_bytes(raw) == "书已"
    assert show_bytes(raw[:4]) == "书‹e5›"
    assert show_bytes(b"\xff") == "‹ff›"


def test_segmenter_keeps_apple_as_its_own_token_in_both_contexts():
    assert segment("苹果公司发布了新的手机")[:2] == ["苹果", "公司"]
    assert "苹果" in segment("我今天吃了一个苹果")
    assert MASK in book_word_tokenizer().vocab


def test_char_tokenizer_ids_do_not_depend_on_meaning():
    tok = CharTokenizer(["天天向上", "好好学习"])
    # 出现次数相同的字按第一次出现的顺序编号：ID 只是排序规则的产物
    assert tok.vocab.itos[2:4] == ["天", "好"]
