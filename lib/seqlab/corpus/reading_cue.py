"""第 1.3 节的「远处线索」句子：只有远在「读」字之前的一个短语决定下一个字是「过」还是「完」。

第 1.1 节的开篇例子问：「这本书我已经读」之后是「过」还是「完」？本书语料里的线索（“又翻了一遍”
“最后一页”）常在「读」的后面或紧挨着它。这里的句子把线索放到很远的地方，中间隔着一段与线索无关的话：

    {人}很多年前在{城市}的{地方}里读过{书}。      （很多年前、小时候、上大学时、好久以前 → 读过）
    {人}一口气在{城市}的{地方}里读完了{书}。      （一口气、花了一整夜、熬了个通宵、终于 → 读完）

线索的最后一个字与「读」之间至少隔着 ``MIN_GAP`` 个字，而这段话（在、城市、的、地方、里）与线索相互独立。
所以只看前 ``n-1`` 个字的 n-gram 模型（``n - 1 <= MIN_GAP + 1``：这段话再加「读」本身）在两类句子上看到的上下文分布完全相同，
只能靠猜；要选对，模型必须把线索记住十来个字。

这些函数是**新增**的：``seqlab.corpus.book_corpus()`` 的输出不变（第 1.1 节的数字和 Embedding 的检查点都依赖它）。
一切由种子决定。
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from seqlab.corpus import BOOKS, PEOPLE, PLACES

CUES = {
    "过": ["很多年前", "小时候", "上大学时", "好久以前"],
    "完": ["一口气", "花了一整夜", "熬了个通宵", "终于"],
}
SPOTS = ["图书馆", "书店", "咖啡馆", "宿舍", "老房子"]
ENDINGS = {"过": "过", "完": "完了"}  # 「读」之后的部分：读过 / 读完了
MIN_GAP = 7  # 线索与「读」之间最少隔几个字：「在」+ 城市（2）+「的」+ 地方（≥ 2）+「里」= 7


@dataclass(frozen=True)
class CueSentence:
    """一个远处线索句。``text`` 是整句；``prefix`` 是到「读」为止的前缀（含「读」）；
    ``answer`` 是「读」之后正确的字（「过」或「完」），``cue`` 是决定它的短语。"""

    text: str
    prefix: str
    answer: str
    cue: str

    @property
    def gap(self) -> int:
        """线索的最后一个字与「读」之间隔着几个字。"""
        return len(self.prefix) - 1 - (self.prefix.index(self.cue) + len(self.cue))


def _sentence(person: str, cue: str, answer: str, place: str, spot: str, book: str) -> CueSentence:
    prefix = f"{person}{cue}在{place}的{spot}里读"
    return CueSentence(f"{prefix}{ENDINGS[answer]}{book}。", prefix, answer, cue)


def _frame(rng: random.Random) -> tuple[str, str, str, str]:
    """与线索无关的部分：人、城市、地方、书。"""
    return rng.choice(PEOPLE), rng.choice(PLACES), rng.choice(SPOTS), rng.choice(BOOKS)


def cue_pairs(n_pairs: int, seed: int) -> list[tuple[CueSentence, CueSentence]]:
    """``n_pairs`` 对句子：每对的人、城市、地方、书都相同，只有线索不同——一句该接「过」，一句该接「完」。

    成对的句子在「读」之前的最后 ``MIN_GAP`` 个字（连同「读」是 ``MIN_GAP + 1`` 个）完全相同，所以任何 ``n <= MIN_GAP + 2`` 的 n-gram 模型
    对两句给出同一个预测：它在每一对上至多对一句。
    """
    rng = random.Random(seed)
    pairs: list[tuple[CueSentence, CueSentence]] = []
    seen: set[str] = set()
    while len(pairs) < n_pairs:
        person, place, spot, book = _frame(rng)
        cues = {answer: rng.choice(options) for answer, options in CUES.items()}
        first, second = (_sentence(person, cues[a], a, place, spot, book) for a in ("过", "完"))
        pair = (first, second)
        if pair[0].text not in seen:
            seen.update(s.text for s in pair)
            pairs.append(pair)
    return pairs


def cue_sentences(n: int, seed: int, *, exclude: frozenset[str] = frozenset()) -> list[CueSentence]:
    """``n`` 个互不相同的远处线索句（两类轮流），不含 ``exclude`` 里的句子。"""
    rng = random.Random(seed)
    out: dict[str, CueSentence] = {}
    while len(out) < n:
        answer = ("过", "完")[len(out) % 2]
        person, place, spot, book = _frame(rng)
        s = _sentence(person, rng.choice(CUES[answer]), answer, place, spot, book)
        if s.text not in exclude:
            out.setdefault(s.text, s)
    return list(out.values())


TRAIN_SEED, TEST_SEED = 1303, 1304
N_TRAIN, N_TEST_PAIRS = 1200, 100


def cue_split() -> tuple[list[CueSentence], list[tuple[CueSentence, CueSentence]]]:
    """第 1.3 节用的划分：``N_TRAIN`` 个训练句，``N_TEST_PAIRS`` 对留出句（与训练句没有重复）。"""
    test = cue_pairs(N_TEST_PAIRS, TEST_SEED)
    held_out = frozenset(s.text for pair in test for s in pair)
    return cue_sentences(N_TRAIN, TRAIN_SEED, exclude=held_out), test
