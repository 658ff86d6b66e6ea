"""附录“符号表”：表中写的形状，与库 seqlab 里对应张量的实际形状逐项一致。

做法：解析 ``chapters/appendix/notation.md`` 里按小节分组的表格，把“形状”一栏中的符号尺寸
（``S``、``V``、``d``、``d_h`` ……）换成下面 ``SIZES`` 里的具体数字，再用库里的类和函数造出真实的
张量，比较两者。库中张量带批维度时（批大小取 2），比较的是去掉批维度之后的形状。
表中每一个写了形状的符号，要么在 ``CHECKS`` 里有对应的检查，要么在 ``NOT_IN_LIBRARY`` 里说明
为什么库里没有它——新增符号而忘了核对，测试同样会失败。
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from torch import nn

from seqlab import attention, embedding, rnn, seq2seq, transformer
from seqlab.runtime import single_thread

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "chapters" / "appendix" / "notation.md"
NOTEBOOKS = ROOT / "chapters" / "ch01"
SECTIONS = [f"1.{n}" for n in range(1, 7)]
HEADER = ["符号", "含义", "形状", "首次出现"]

# 互不相同的小尺寸：表里若把一个尺寸写成另一个，形状就对不上。
SIZES = {
    "S": 5, "V": 17, "d": 6, "d_in": 4, "w": 2, "d_h": 7, "d_s": 9, "d_a": 11, "d_k": 3, "d_v": 2,
    "d_model": 24, "h": 3, "d_ff": 10, "T": 13,
    "n_h": 3, "T_kv": 13,  # 1.6 节：头数 n_h、KV cache 里的 token 数 T_kv（与 h、T 取同样的数，库里的造法不变）
}
SECTION_SIZES = {"1.6": {"d_k": SIZES["d_model"] // SIZES["h"]}}  # 1.6 节：d_k = d_model / h
BATCH = 2


# ---------------------------------------------------------------- 解析页面
def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def parse_page(text: str) -> tuple[dict[str, list[list[str]]], dict[str, str]]:
    """返回 ``({小节: [表头, 行, 行, …]}, {小节: 标题})``；只收 ``## 1.N 标题`` 之下的表格。"""
    tables: dict[str, list[list[str]]] = {}
    titles: dict[str, str] = {}
    section = None
    for line in text.splitlines():
        if line.startswith("## "):
            m = re.match(r"## (1\.\d) (.+)$", line)
            section = m.group(1) if m else None
            if m:
                titles[section] = m.group(2).strip()
            continue
        if section and line.startswith("|") and not re.match(r"\|\s*-", line):
            tables.setdefault(section, []).append(_cells(line))
    return tables, titles


def rows(tables) -> dict[tuple[str, str], list[str]]:
    out = {}
    for section, table in tables.items():
        for row in table[1:]:
            key = (section, row[0])
            assert key not in out, f"{section} 节的表里 {row[0]} 出现了两次"
            out[key] = row
    return out


_SHAPE = re.compile(r"标量|\$\(([^$]*)\)\$")
_ALLOWED = (ast.Expression, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Div, ast.Name, ast.Load,
            ast.Constant)


def _size(expr: str, sizes: dict[str, int]) -> int:
    """``2d_h`` → ``2 * d_h``，``d_{\\text{model}}`` → ``d_model``，再代入具体数字。"""
    expr = re.sub(r"\\text\{([^}]*)\}", r"\1", expr)
    expr = expr.replace("\\,", "").replace("{", "").replace("}", "").replace(" ", "")
    expr = re.sub(r"(\d)([A-Za-z])", r"\1*\2", expr)
    tree = ast.parse(expr, mode="eval")
    for node in ast.walk(tree):
        assert isinstance(node, _ALLOWED), f"看不懂形状里的 {expr!r}"
        if isinstance(node, ast.Name):
            assert node.id in sizes, f"形状里的尺寸 {node.id!r} 没有对应的具体数字"
    value = eval(compile(tree, "<shape>", "eval"), {"__builtins__": {}}, dict(sizes))  # 语法已在上面限定
    assert value == int(value)
    return int(value)


def page_shapes(cell: str, sizes: dict[str, int]) -> list[tuple[int, ...]]:
    """形状一栏里依次出现的形状：“标量”记为 ``()``，``$(a, b)$`` 代入尺寸后成为元组。"""
    out = []
    for m in _SHAPE.finditer(cell):
        if m.group(0) == "标量":
            out.append(())
        else:
            items = [s for s in m.group(1).split(",") if s.strip()]
            out.append(tuple(_size(s, sizes) for s in items))
    return out


def sizes_for(section: str, overrides: dict[str, str] | None = None) -> dict[str, int]:
    sz = dict(SIZES, **SECTION_SIZES.get(section, {}))
    for name, other in (overrides or {}).items():
        sz[name] = sz[other]
    return sz


# ---------------------------------------------------------------- 用库造出真实的张量
def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _ids(sz, n=None, vocab=None):
    return torch.randint(0, vocab or sz["V"], (BATCH, n or sz["S"]), generator=_gen(1))


# 1.1
def _p_theta(sz):
    torch.manual_seed(0)
    dec = transformer.TinyDecoder(sz["V"], sz["d_model"], sz["h"], sz["d_ff"], n_layers=1)
    with torch.no_grad():
        p = torch.softmax(dec(_ids(sz)), dim=-1)  # (B, S, V)：每个位置一个条件分布
    assert torch.allclose(p.sum(-1), torch.ones(BATCH, sz["S"]))
    return [p[0, 2].shape]


# 1.2
def _E(sz):
    return [embedding.Embedding(sz["V"], sz["d"]).E.shape]


def _e_i(sz):
    E = embedding.Embedding(sz["V"], sz["d"]).E.detach()
    i = torch.tensor(3)
    e_i = embedding.lookup(E, i)
    assert torch.allclose(e_i, embedding.one_hot(i, sz["V"]) @ E)
    return [e_i.shape]


def _u_i(sz):
    return [embedding.one_hot(torch.tensor(3), sz["V"]).shape]


def _U(sz):
    return [embedding.one_hot(_ids(sz)[0], sz["V"]).shape]


def _X(sz):
    return [embedding.Embedding(sz["V"], sz["d"])(_ids(sz))[0].shape]


def _W_k(sz):
    W = embedding.WindowContext(sz["d"], sz["w"]).W
    return [W[0 + sz["w"]].shape, W.shape]


def _H_window(sz):
    X = embedding.Embedding(sz["V"], sz["d"])(_ids(sz))
    return [embedding.WindowContext(sz["d"], sz["w"])(X)[0].shape]


# 1.3
def _elman(sz):
    torch.manual_seed(0)
    model = rnn.ElmanRNN(sz["d_in"], sz["d"])
    inputs = embedding.Embedding(sz["V"], sz["d_in"])(_ids(sz)).detach()  # 每一行是某个 token 的 e_t
    with torch.no_grad():
        H, A = model(inputs, return_preactivations=True)
    return model, inputs, H, A


def _e_t(sz):
    model, inputs, _, _ = _elman(sz)
    e_t = inputs[0, 1]
    model.step(e_t, torch.zeros(sz["d"]))  # 库接受这个形状的输入
    return [e_t.shape]


def _h_t(sz):
    _, _, H, _ = _elman(sz)
    return [H[0, 1].shape, H[0].shape]


def _W_x(sz):
    return [_elman(sz)[0].W_x.shape]


def _W_h(sz):
    return [_elman(sz)[0].W_h.shape]


def _b(sz):
    return [_elman(sz)[0].b.shape]


def _a_t(sz):
    _, _, _, A = _elman(sz)
    return [A[0, 1].shape]


def _J_j(sz):
    model, _, _, A = _elman(sz)
    return [rnn.step_jacobian(A[0, 1], model.W_h.detach()).shape]


def _dh_dh(sz):
    model, _, _, A = _elman(sz)
    t, r = sz["S"] - 1, 3
    Js = rnn.step_jacobian(A[0, t - r + 1 : t + 1], model.W_h.detach())  # J_{t-r+1} … J_t
    return [rnn.jacobian_product(Js).shape]


def _Q_orth(sz):
    Q = rnn.orthogonal_matrix(sz["d"])
    assert torch.allclose(Q.T @ Q, torch.eye(sz["d"], dtype=Q.dtype), atol=1e-10)
    return [Q.shape, rnn.recurrent_matrix("orthogonal", sz["d"], 0.9).shape]


def _rho(sz):
    W = rnn.recurrent_matrix("nonnormal", sz["d"], 0.9)
    rho = rnn.spectral_radius(W)
    assert abs(rho - 0.9) < 1e-6
    return [torch.as_tensor(rho).shape]


def _lstm(sz):
    # 门控单元用的是 PyTorch 自带的 nn.LSTMCell / nn.GRUCell（正文同样如此），这里核对的是正文写的形状
    torch.manual_seed(0)
    return nn.LSTMCell(sz["d_in"], sz["d"]), torch.randn(BATCH, sz["d_in"]), torch.randn(BATCH, sz["d"])


def _c_t_lstm(sz):
    cell, x, h = _lstm(sz)
    _, c = cell(x, (h, torch.zeros_like(h)))
    return [c[0].shape]


def _lstm_gates(sz):
    cell, x, h = _lstm(sz)
    gates = x @ cell.weight_ih.T + cell.bias_ih + h @ cell.weight_hh.T + cell.bias_hh
    return [g[0].shape for g in gates.chunk(4, dim=-1)]  # i, f, g, o


def _gru_gates(sz):
    cell = nn.GRUCell(sz["d_in"], sz["d"])
    x = torch.randn(BATCH, sz["d_in"])
    rnn.bias_gates_to_remember(cell, 0.0)  # 库按 [d, 2d) 这一段找更新门 z
    gi = x @ cell.weight_ih.T + cell.bias_ih
    return [g[0].shape for g in gi.chunk(3, dim=-1)[1:]]  # z, n


def _u_readout(sz):
    model, inputs, H, _ = _elman(sz)
    u = H[0, -1] / H[0, -1].norm()  # u 与 h_S 同形状，uᵀh_S 才是一个数
    assert rnn.input_gradient_norms(model, inputs, u).shape == (sz["S"],)
    return [u.shape]


# 1.4
def _additive(sz):
    torch.manual_seed(0)
    att = seq2seq.AdditiveAttention(sz["d_s"], 2 * sz["d_h"], sz["d_a"])
    H = torch.randn(BATCH, sz["S"], 2 * sz["d_h"], generator=_gen(2))
    s_prev = torch.randn(BATCH, sz["d_s"], generator=_gen(3))
    return att, s_prev, H


def _W_s(sz):
    return [_additive(sz)[0].W_s.shape]


def _W_h_additive(sz):
    return [_additive(sz)[0].W_h.shape]


def _v_a(sz):
    return [_additive(sz)[0].v_a.shape]


def _e_tj(sz):
    att, s_prev, H = _additive(sz)
    e = att.scores(s_prev, H)
    return [e[0, 1].shape, e[0].shape]


def _alpha_tj(sz):
    att, s_prev, H = _additive(sz)
    _, alpha = att(s_prev, H)
    assert torch.allclose(alpha.sum(-1), torch.ones(BATCH))
    return [alpha[0, 1].shape, alpha[0].shape]


def _c_t_additive(sz):
    att, s_prev, H = _additive(sz)
    c_t, _ = att(s_prev, H)
    return [c_t[0].shape]


def _seq2seq(sz, kind="attention"):
    torch.manual_seed(0)
    model = seq2seq.MODELS[kind](sz["V"], sz["V"] + 1, d_emb=5, d_h=sz["d_h"], d_a=sz["d_a"])
    with torch.no_grad():
        H = model.encoder(_ids(sz))
        s0, c = model.start(H)
    return model, H, s0, c


def _h_j(sz):
    _, H, _, _ = _seq2seq(sz)
    return [H[0, 1].shape]


def _H_encoder(sz):
    _, H, _, _ = _seq2seq(sz)
    return [H[0].shape]


def _c_fixed(sz):
    _, H, _, c = _seq2seq(sz, "fixed")
    return [c[0].shape]


def _s_t(sz):
    model, H, s0, c = _seq2seq(sz)
    with torch.no_grad():
        _, s1, _ = model.step(torch.zeros(BATCH, dtype=torch.long), s0, H, c)
    return [s1[0].shape, s0[0].shape]


def _W_init(sz):
    model, _, _, _ = _seq2seq(sz)
    return [model.init_state.weight.shape, model.init_state.bias.shape]


def _W_o(sz):
    torch.manual_seed(0)
    model = seq2seq.MODELS["attention"](sz["V"] + 1, sz["V"], d_emb=5, d_h=sz["d_h"], d_a=sz["d_a"])  # 目标词表大小 V
    return [model.out.weight.shape, model.out.bias.shape]


# 1.5
def _self_attention(sz):
    torch.manual_seed(0)
    layer = attention.SelfAttention(sz["d"], d_k=sz["d_k"], d_v=sz["d_v"])
    X = torch.randn(BATCH, sz["S"], sz["d"], generator=_gen(4))
    return layer, X


def _W_QK(sz):
    layer, _ = _self_attention(sz)
    return [layer.W_Q.shape, layer.W_K.shape]


def _W_V(sz):
    return [_self_attention(sz)[0].W_V.shape]


def _QK(sz):
    layer, X = _self_attention(sz)
    return [(X @ layer.W_Q)[0].shape, (X @ layer.W_K)[0].shape]


def _V_value(sz):
    layer, X = _self_attention(sz)
    return [(X @ layer.W_V)[0].shape]


def _qk_rows(sz):
    layer, X = _self_attention(sz)
    return [(X @ layer.W_Q)[0, 1].shape, (X @ layer.W_K)[0, 2].shape]


def _v_row(sz):
    layer, X = _self_attention(sz)
    return [(X @ layer.W_V)[0, 2].shape]


def _scores(sz):
    layer, X = _self_attention(sz)
    Q, K = X @ layer.W_Q, X @ layer.W_K
    return [(Q @ K.transpose(-2, -1))[0].shape]


def _M(sz):
    layer, X = _self_attention(sz)
    mask = attention.causal_mask(sz["S"])
    layer(X, mask)  # 同一个掩码对批里每句话都适用
    return [mask.shape]


def _A(sz):
    layer, X = _self_attention(sz)
    with torch.no_grad():
        _, A = layer(X, attention.causal_mask(sz["S"]))
    return [A[0].shape]


def _Y(sz):
    layer, X = _self_attention(sz)
    with torch.no_grad():
        Y, _ = layer(X)
    return [Y[0].shape]


def _y_i(sz):
    layer, X = _self_attention(sz)
    with torch.no_grad():
        Y, _ = layer(X)
    return [Y[0, 1].shape]


def _H_sweeps(sz):
    torch.manual_seed(0)
    cell = nn.RNN(sz["d_in"], sz["d"], batch_first=True)
    X = torch.randn(sz["S"], sz["d_in"], generator=_gen(5))
    with torch.no_grad():
        return [attention.rnn_parallel_sweeps(cell, X, 2).shape]


# 1.6
def _mhsa(sz):
    torch.manual_seed(0)
    mh = transformer.MultiHeadSelfAttention(sz["d_model"], sz["h"])
    X = torch.randn(BATCH, sz["S"], sz["d_model"], generator=_gen(6))
    return mh, X


def _W_QKV_full(sz):
    mh, _ = _mhsa(sz)
    return [W.weight.T.shape for W in (mh.W_Q, mh.W_K, mh.W_V)]


def _W_QKV_head(sz):
    mh, X = _mhsa(sz)
    assert mh.d_k == sz["d_k"]
    i, d_k = 1, mh.d_k
    cols = slice(i * d_k, (i + 1) * d_k)
    out = []
    with torch.no_grad():
        for W in (mh.W_Q, mh.W_K, mh.W_V):
            W_i = W.weight.T[:, cols]  # 第 i 个头 = 第 i 段 d_k 列
            assert torch.allclose(X @ W_i + W.bias[cols], mh.split_heads(W(X))[:, i], atol=1e-6)
            out.append(W_i.shape)
    return out


def _head_i(sz):
    mh, X = _mhsa(sz)
    with torch.no_grad():
        Q, K, V = (mh.split_heads(W(X)) for W in (mh.W_Q, mh.W_K, mh.W_V))
        heads, _ = attention.scaled_dot_product_attention(Q, K, V)  # (B, h, S, d_k)
    return [heads[0, 1].shape]


def _W_O(sz):
    return [_mhsa(sz)[0].W_O.weight.T.shape]


def _alpha_heads(sz):
    mh, X = _mhsa(sz)
    with torch.no_grad():
        _, alpha = mh(X)
    return [alpha[0].shape]


def _ffn(sz):
    torch.manual_seed(0)
    return transformer.PositionwiseFFN(sz["d_model"], sz["d_ff"])


def _x_position(sz):
    mh, X = _mhsa(sz)
    x = X[0, 1]
    with torch.no_grad():
        y = _ffn(sz)(x)
    assert transformer.LayerNorm(sz["d_model"])(x).shape == x.shape
    return [y.shape]


def _W_1(sz):
    W_1 = _ffn(sz).W_1
    return [W_1.weight.T.shape, W_1.weight.shape]


def _b_1(sz):
    return [_ffn(sz).W_1.bias.shape]


def _W_2(sz):
    W_2 = _ffn(sz).W_2
    return [W_2.weight.T.shape, W_2.weight.shape]


def _b_2(sz):
    return [_ffn(sz).W_2.bias.shape]


def _gamma_beta(sz):
    ln = transformer.LayerNorm(sz["d_model"])
    return [ln.gamma.shape, ln.beta.shape]


def _PE(sz):
    return [transformer.sinusoidal_positions(sz["S"], sz["d_model"]).shape]


def _kv_cache(sz):
    torch.manual_seed(0)
    dec = transformer.TinyDecoder(sz["V"], sz["d_model"], sz["h"], sz["d_ff"], n_layers=2)
    cache = transformer.KVCache()
    with torch.no_grad():
        dec(_ids(sz, n=sz["T"]), cache)
    assert cache.length == sz["T"]
    return [cache.K[0][0].shape, cache.V[0][0].shape]


Builder = Callable[[dict], list]
# (小节, 表中“符号”一栏的原文) → (造张量的函数, 需要改成别的尺寸的名字)
CHECKS: dict[tuple[str, str], tuple[Builder, dict[str, str]]] = {
    ("1.1", r"$p_\theta$"): (_p_theta, {}),
    ("1.2", "$E$"): (_E, {}),
    ("1.2", "$e_i$"): (_e_i, {}),
    ("1.2", "$u_i$"): (_u_i, {}),
    ("1.2", "$U$"): (_U, {}),
    ("1.2", "$X$"): (_X, {}),
    ("1.2", "$W_k$"): (_W_k, {}),
    ("1.2", "$H$"): (_H_window, {}),
    ("1.3", "$e_t$"): (_e_t, {}),
    ("1.3", "$h_t$"): (_h_t, {}),
    ("1.3", "$W_x$"): (_W_x, {}),
    ("1.3", "$W_h$"): (_W_h, {}),
    ("1.3", "$b$"): (_b, {}),
    ("1.3", "$a_t$"): (_a_t, {}),
    ("1.3", "$J_j$"): (_J_j, {}),
    ("1.3", r"$\partial h_t/\partial h_{t-r}$"): (_dh_dh, {}),
    ("1.3", "$Q$"): (_Q_orth, {}),
    ("1.3", r"$\rho$"): (_rho, {}),
    ("1.3", "$C_t$"): (_c_t_lstm, {}),
    ("1.3", "$f_t$，$i_t$，$o_t$，$g_t$"): (_lstm_gates, {}),
    ("1.3", "$z_t$，$n_t$"): (_gru_gates, {}),
    ("1.3", "$u$"): (_u_readout, {}),
    ("1.4", "$c$"): (_c_fixed, {}),
    ("1.4", "$h_j$"): (_h_j, {}),
    ("1.4", "$H$"): (_H_encoder, {}),
    # 书中的编码器—解码器取 d_s = d_h；单独的 AdditiveAttention 则允许两者不同
    ("1.4", "$s_t$，$s_{t-1}$"): (_s_t, {"d_s": "d_h"}),
    ("1.4", "$W_s$"): (_W_s, {}),
    ("1.4", "$W_h$"): (_W_h_additive, {}),
    ("1.4", "$v_a$"): (_v_a, {}),
    ("1.4", "$e_{tj}$"): (_e_tj, {}),
    ("1.4", r"$\alpha_{tj}$"): (_alpha_tj, {}),
    ("1.4", "$c_t$"): (_c_t_additive, {}),
    ("1.4", r"$W_{\text{init}}$，$b_{\text{init}}$"): (_W_init, {"d_s": "d_h"}),
    ("1.4", "$W_o$，$b_o$"): (_W_o, {"d_s": "d_h"}),
    ("1.5", "$W_Q$，$W_K$"): (_W_QK, {}),
    ("1.5", "$W_V$"): (_W_V, {}),
    ("1.5", "$Q$，$K$"): (_QK, {}),
    ("1.5", "$V$"): (_V_value, {}),
    ("1.5", "$q_i$，$k_j$"): (_qk_rows, {}),
    ("1.5", "$v_j$"): (_v_row, {}),
    ("1.5", r"$QK^\top/\sqrt{d_k}$"): (_scores, {}),
    ("1.5", "$M$"): (_M, {}),
    ("1.5", "$A$"): (_A, {}),
    ("1.5", "$Y$"): (_Y, {}),
    ("1.5", "$y_i$"): (_y_i, {}),
    ("1.5", "$H^{(r)}$"): (_H_sweeps, {}),
    ("1.6", "$W_Q$，$W_K$，$W_V$"): (_W_QKV_full, {}),
    ("1.6", "$W_Q^{(i)}$，$W_K^{(i)}$，$W_V^{(i)}$"): (_W_QKV_head, {}),
    ("1.6", r"$\text{head}_i$"): (_head_i, {}),
    ("1.6", "$W_O$"): (_W_O, {}),
    ("1.6", r"$\alpha$"): (_alpha_heads, {}),
    ("1.6", "$x$"): (_x_position, {}),
    ("1.6", "$W_1$"): (_W_1, {}),
    ("1.6", "$b_1$"): (_b_1, {}),
    ("1.6", "$W_2$"): (_W_2, {}),
    ("1.6", "$b_2$"): (_b_2, {}),
    ("1.6", r"$\gamma$，$\beta$"): (_gamma_beta, {}),
    ("1.6", "$PE$"): (_PE, {}),
    ("1.6", "KV cache 中一层的 $K$，$V$"): (_kv_cache, {}),
}

# 表里写了形状、但库里没有对应对象的符号。
NOT_IN_LIBRARY = {
    ("1.3", "$W_o$，$b_y$"): "读出层在正文里临时用 nn.Linear 搭出，库里没有",
    ("1.3", r"$B$，$\beta$"): "若尔当块只在 recurrent_matrix 内部构造，不对外暴露",
    ("1.4", "$W_a$"): "练习 1.4.4 的双线性打分矩阵只在练习里出现（学生自己写），库里没有",
    ("1.6", "$P$"): "置换只是一串下标，库里没有置换矩阵",
}


# ---------------------------------------------------------------- 测试
@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    with single_thread():  # 张量都很小：单线程最快，机器繁忙时也不互相等待
        yield


@pytest.fixture(scope="module")
def page():
    tables, titles = parse_page(PAGE.read_text(encoding="utf-8"))
    return tables, titles, rows(tables)


def test_page_has_a_table_for_every_section_with_the_agreed_columns(page):
    tables, _, _ = page
    assert PAGE.read_text(encoding="utf-8").splitlines()[:2] == ["(notation)=", "# 符号表"]
    assert sorted(tables) == SECTIONS
    for section, table in tables.items():
        assert table[0] == HEADER, f"{section} 节的表头应为 {HEADER}"
        assert all(len(row) == len(HEADER) for row in table), f"{section} 节的表里有一行列数不对"


def test_section_headings_match_the_chapter_titles(page):
    _, titles, _ = page
    for nb in sorted(NOTEBOOKS.glob("0*.ipynb")):
        first = "".join(json.loads(nb.read_text(encoding="utf-8"))["cells"][0]["source"]).splitlines()
        label = re.fullmatch(r"\(sec-1-(\d)\)=", first[0]).group(1)
        assert titles[f"1.{label}"] == first[1].removeprefix("# ").strip(), nb.name


def test_first_appearance_points_to_a_real_section_no_later_than_its_group(page):
    _, _, all_rows = page
    for (section, symbol), row in all_rows.items():
        m = re.fullmatch(r"\{ref\}`(1\.\d) <sec-1-(\d)>`", row[3])
        assert m, f"{section} 节 {symbol} 的“首次出现”应写成 {{ref}}`1.N <sec-1-N>`，现在是 {row[3]!r}"
        assert m.group(1) == f"1.{m.group(2)}", f"{symbol}：显示的节号与链接的小节不一致"
        assert m.group(1) <= section, f"{symbol} 分在 {section} 节，首次出现却写在更后面的 {m.group(1)}"


def test_every_shape_on_the_page_is_checked_or_explained(page):
    _, _, all_rows = page
    with_shape = {key for key, row in all_rows.items() if re.search(r"\$\(", row[2])}
    unchecked = with_shape - set(CHECKS) - set(NOT_IN_LIBRARY)
    assert not unchecked, f"这些符号写了形状，却没有核对：{sorted(unchecked)}"
    missing = (set(CHECKS) | set(NOT_IN_LIBRARY)) - set(all_rows)
    assert not missing, f"符号表里找不到这些符号：{sorted(missing)}"


@pytest.mark.parametrize("key", list(CHECKS), ids=lambda k: f"{k[0]} {k[1]}")
def test_shape_on_the_page_matches_the_library(page, key):
    _, _, all_rows = page
    assert key in all_rows, f"符号表的 {key[0]} 节里没有 {key[1]}"
    builder, overrides = CHECKS[key]
    sz = sizes_for(key[0], overrides)
    expected = page_shapes(all_rows[key][2], sz)
    actual = [tuple(s) for s in builder(sz)]
    assert expected, f"{key}：形状一栏里没有可核对的形状"
    if len(expected) == 1:  # 一个形状写给几个符号（如 $W_Q$，$W_K$）：每一个都要相符
        expected = expected * len(actual)
    assert expected == actual, (
        f"{key[0]} 节 {key[1]}：符号表写的是 {all_rows[key][2]!r}，代入 {sz} 得 {expected}；库里实际是 {actual}"
    )


def test_the_page_shape_parser_reads_symbolic_sizes():
    sz = sizes_for("1.6")
    cell = r"$(d_{\text{model}}, d_k)$；标量；$(2d_h,)$；$(2w+1, d, d)$"
    assert page_shapes(cell, sz) == [(24, 8), (), (14,), (5, 6, 6)]
    with pytest.raises(AssertionError):
        page_shapes("$(d_\\text{unknown},)$", sz)


# ---------------------------------------------------------------- 符号表是登记册：一个字母一个意思
# 全书的约定（见各节的改动）：这些字母只有一个意思，符号表里它们的“含义”一栏不许出现右边这些词。
ONE_MEANING: dict[str, tuple[str, ...]] = {
    "$L$": ("周期", "段长", "截断", "一段"),  # L 只是层数（与损失 L）：截断长度记 K，复读周期记 m
    "$c_t$": ("单元状态",),  # c_t 只是上下文向量：LSTM 的单元状态记 C_t
    "$c$": ("偏置", "运算量", "FLOP"),  # 读出层偏置记 b_y，每个 token 的运算量记 F
    "$P$": ("提示", "长度"),  # P 只是置换矩阵：提示词长度记 T_p
    "$T$": ("缓存",),  # T 是目标/解码一侧的位置数：缓存长度记 T_kv
    "$H$": ("头数",),  # H 只是隐藏状态叠成的矩阵：头数记 n_h
}
DELIBERATE_HEADING = "## 同一个字母，不同的意思"
_MATH = re.compile(r"\$([^$\n]+)\$")
# 正文里“定义”一个符号的说法：记作 $X$、令 $X$、$X$ 表示……、层数 $L$、长度 $T$ ……
_SYM = r"(?:\\[a-zA-Z]+|[A-Za-z])(?:_\{[^{}$]*(?:\{[^{}$]*\}[^{}$]*)*\}|_[A-Za-z0-9])?"
DEFINES = [
    re.compile(rf"(?:记作|记为|记成|写作|写成|令|设)\s*\$({_SYM})\$"),
    re.compile(rf"\$({_SYM})\$\s*(?:表示|代表|是指|指的是|称为|叫做)"),
    re.compile(rf"(?:层数|头数|个数|长度|周期|段长|大小|偏置|宽度|维度|步数|运算量)\s*\$({_SYM})\$"),
]


def _norm(symbol: str) -> str:
    s = re.sub(r"\\(?:mathrm|text|operatorname|mathit|mathbf)(?![A-Za-z])", "", symbol)  # T_{\mathrm p} → T_p
    return s.replace("\\,", "").replace(" ", "").replace("{", "").replace("}", "")


def _symbols(cell: str) -> list[str]:
    return [_norm(m) for m in _MATH.findall(cell)]


def registry(text: str) -> tuple[dict[str, list[tuple[str, str]]], set[str], set[str]]:
    """({符号: [(小节, 含义)…]}, 特意一字多义的符号, 阅读约定里出现的符号)。"""
    tables, _ = parse_page(text)
    meanings: dict[str, list[tuple[str, str]]] = {}
    for section, table in tables.items():
        for row in table[1:]:
            for sym in _symbols(row[0]):
                meanings.setdefault(sym, []).append((section, row[1]))
    deliberate_text = text[text.index(DELIBERATE_HEADING):]
    deliberate = {sym for line in deliberate_text.splitlines() if line.startswith("| $")
                  for sym in _symbols(_cells(line)[0])}
    conventions = text[: text.index("## 1.1 ")]
    return meanings, deliberate, set(_symbols(conventions))


@pytest.fixture(scope="module")
def registered():
    return registry(PAGE.read_text(encoding="utf-8"))


def test_a_symbol_with_two_meanings_is_listed_as_deliberate(registered):
    meanings, deliberate, _ = registered
    doubled = {sym: rows for sym, rows in meanings.items() if len({s for s, _ in rows}) > 1}
    unlisted = sorted(sym for sym in doubled if sym not in deliberate)
    assert not unlisted, (
        "这些符号在符号表的几个小节里各有含义，却没有列进“同一个字母，不同的意思”："
        + "；".join(f"{s}（{'、'.join(sec for sec, _ in doubled[s])}）" for s in unlisted)
    )


@pytest.mark.parametrize("symbol", list(ONE_MEANING))
def test_book_wide_letters_keep_their_one_meaning(registered, symbol):
    meanings, _, _ = registered
    text = PAGE.read_text(encoding="utf-8")
    deliberate_rows = [line for line in text[text.index(DELIBERATE_HEADING):].splitlines()
                       if line.startswith("| $") and _symbols(symbol)[0] in _symbols(_cells(line)[0])]
    bad = [f"{sec} 节：{meaning}" for sec, meaning in meanings.get(_symbols(symbol)[0], [])
           if any(word in meaning for word in ONE_MEANING[symbol])]
    bad += [f"一字多义表：{_cells(line)[1]}" for line in deliberate_rows
            if any(word in _cells(line)[1] for word in ONE_MEANING[symbol])]
    assert not bad, f"{symbol} 按全书的约定只有一个意思，符号表却写着：" + "；".join(bad)


def defined_symbols(markdown: str) -> set[str]:
    """一段正文里用“记作 / 令 / 表示 / 层数 $L$”这类说法定义的符号（已规范化）。"""
    found = set()
    for pattern in DEFINES:
        found |= {_norm(m) for m in pattern.findall(markdown)}
    return found


def unregistered_symbols(path: Path, registered) -> list[str]:
    meanings, _, conventions = registered
    nb = json.loads(path.read_text(encoding="utf-8"))
    section = f"1.{int(path.name[:2])}"
    known = conventions | {sym for sym, rows in meanings.items() if any(sec <= section for sec, _ in rows)}
    problems = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        for sym in sorted(defined_symbols("".join(cell["source"])) - known):
            problems.append(f"第 {i} 格定义了 ${sym}$，符号表的 {section} 节及以前都没有它")
    return problems


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("0*.ipynb")), ids=lambda p: p.name)
def test_every_symbol_a_section_defines_is_in_the_notation_page(path, registered):
    problems = unregistered_symbols(path, registered)
    assert not problems, f"{path.name}：\n" + "\n".join(problems)


def test_definition_patterns():
    text = r"层数 $L$ 与头数 $n_h$；提示词长度记作 $T_{\mathrm p}$，$K$ 表示截断的段长；$x$ 只是个例子。"
    assert defined_symbols(text) == {"L", "n_h", "T_p", "K"}
