"""第 1.4 节的探索器：Bahdanau 注意力的权重 α_tj，以及第 t 步的上下文 c_t 是怎样拼出来的。

左边是热力图：行是模型逐步生成的目标词，列是源句的字，格子的颜色是 α_tj；空心圆标出玩具任务
的标准对齐（模型训练时从没见过它）。右边的条形图是当前这一步的那一行权重——``c_t`` 就是按这些
比例把各个 ``h_j`` 加起来。
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import ClassVar

import ipywidgets as widgets
import plotly.graph_objects as go
import torch

from seqlab import encdec, train
from seqlab.corpus import translation as task
from seqlab.errors import InputError
from seqlab.explorers import Explorer, clean_text, register
from seqlab.figures import ATTENTION_SCALE, PALETTE, attention_heatmap

MODEL = "seq2seq_attention"
BASELINE = "seq2seq_fixed"
# 模型选择：第 1.4 节的 Bahdanau 注意力，或第 1.6 节编码器—解码器 Transformer 的交叉注意力（所选一层、各头平均）
MODELS = {MODEL: "Bahdanau 注意力（1.4 节）", encdec.NAME: "Transformer 交叉注意力（1.6 节）"}
SHORT = {MODEL: "注意力模型", encdec.NAME: "Transformer"}
ALIASES = {",": "，", "、": "，", "；": "，", ";": "，"}
TOP = 3  # 说明文字里列出 c_t 的前几项


def parse_source(text: str) -> list[str]:
    """把读者输入的源句拆成字；空白忽略，半角逗号当作全角。坏输入抛 ``InputError``。"""
    text = clean_text(text, max_chars=200, what="源句")
    chars = [ALIASES.get(ch, ch) for ch in text if not ch.isspace()]
    unknown = sorted({ch for ch in chars if ch not in task.LEXICON}, key=chars.index)
    if unknown:
        shown = "".join(unknown[:8]) + ("…" if len(unknown) > 8 else "")
        raise InputError(
            f"源句里有玩具语言不认识的符号「{shown}」。可用的字只有：名词 {''.join(task.NOUNS)}，"
            f"形容词 {''.join(task.ADJECTIVES)}，动词 {''.join(task.VERBS)}，以及逗号「，」。"
        )
    if len(chars) > task.MAX_LEN:
        raise InputError(
            f"源句有 {len(chars)} 个字，超过了模型训练时见过的最大长度 {task.MAX_LEN}：请缩短后再试。"
        )
    return chars


@dataclass
class AttentionState:
    source: list[str]  # 源句的字，长度 S
    output: list[str]  # 注意力模型贪心解码出的目标词，长度 T = S
    alpha: list[list[float]]  # (T, S) 的 α_tj
    reference: list[str] | None  # 标准译文（不合语法时为 None）
    gold: list[int] | None  # 标准对齐：第 t 个目标词来自哪个源位置
    baseline: list[str]  # 固定上下文模型的译文
    step: int  # 当前展示的目标步 t（从 1 数）
    clamped: bool  # 滑块超过了句长，被收回到最后一步
    model: str = MODEL  # 权重来自哪个模型（``MODELS`` 的键）


def _attend(model: str, src: torch.Tensor, T: int) -> tuple[torch.Tensor, torch.Tensor]:
    """贪心解码，返回 ``(ids (1, T), α (1, T, S))``。Transformer 的交叉注意力取 ``encdec.SHOWN_LAYER`` 层、各头平均。"""
    ids, alpha = train.load(model).model.greedy(src, T)
    if model == encdec.NAME:  # (1, 层, 头, T, S) → (1, T, S)
        alpha = encdec.head_mean(alpha[:, encdec.SHOWN_LAYER])
    return ids, alpha


@lru_cache(maxsize=128)
def _translate(source: tuple[str, ...], model: str = MODEL) -> AttentionState:
    """所选模型与固定上下文模型各贪心解码一次（按源句缓存：拖动步数滑块时不必重算）。"""
    src = torch.tensor([task.encode_source(list(source))])
    ids, alpha = _attend(model, src, len(source))
    base_ids, _ = train.load(BASELINE).model.greedy(src, len(source))
    grammatical = task.is_grammatical(list(source))
    return AttentionState(
        source=list(source),
        output=task.decode_target(ids[0]),
        alpha=[[round(a, 4) for a in row] for row in alpha[0].tolist()],
        reference=task.translate(list(source)) if grammatical else None,
        gold=task.alignment(list(source)) if grammatical else None,
        baseline=task.decode_target(base_ids[0]),
        step=1,
        clamped=False,
        model=model,
    )


def attention_state(text: str, step: int = 1, model: str = MODEL) -> AttentionState:
    """探索器的计算函数：源句 → 两个模型的译文、α 矩阵；``step`` 超出句长时收回到最后一步。"""
    if model not in MODELS:
        raise InputError(f"没有这个模型：{model!r}；可选：{'、'.join(MODELS.values())}。")
    state = _translate(tuple(parse_source(text)), model)
    t = min(max(int(step), 1), len(state.source))
    return replace(state, step=t, clamped=t != int(step))


def _score(words: list[str], reference: list[str] | None) -> str:
    if reference is None:
        return ""
    right = sum(a == b for a, b in zip(words, reference))
    return f"（{right}/{len(reference)} 个词与标准译文一致）"


def _categories(labels: list[str]) -> list[str]:
    """坐标用的类别名 ``序号·token``（从 1 数，与正文的 t、j 一致）：重复的 token 不会被 plotly 合并成一格。"""
    return [f"{i}·{c}" for i, c in enumerate(labels, start=1)]


def _gold_xy(state: AttentionState) -> tuple[list[str], list[str]]:
    if state.gold is None:
        return [], []
    xs, ys = _categories(state.source), _categories(state.output)
    return [xs[j] for j in state.gold], ys


def _bar(state: AttentionState, t: int) -> dict:
    return {"x": _categories(state.source), "y": state.alpha[t - 1], "name": f"α_{t}j"}


def _hover_text(state: AttentionState) -> list[list[str]]:
    return [
        [f"第 {t} 步（输出 {w}）读 h_{j}「{c}」" for j, c in enumerate(state.source, start=1)]
        for t, w in enumerate(state.output, start=1)
    ]


# 版面（像素）：上方是 α 热力图，下方是当前这一步的条形图，两者共用同一组源字列，上下对齐。
ROW_PX, BAR_PX, GAP_PX, TOP_PX, BOTTOM_PX = 25, 130, 74, 96, 70
MIN_HEAT_PX = 190


def _geometry(T: int, bottom: int = BOTTOM_PX, heat_px: int | None = None) -> dict:
    """各块的位置。``heat_px`` 给定时热力图高度固定（静态面：切换例句时整张图的高度不能变，
    否则网页上图的容器不会跟着变高）。"""
    heat = heat_px or max(MIN_HEAT_PX, ROW_PX * T)
    plot = heat + GAP_PX + BAR_PX
    return {
        "height": TOP_PX + plot + bottom,
        "heat": [round((BAR_PX + GAP_PX) / plot, 4), 1.0],
        "bar": [0.0, round(BAR_PX / plot, 4)],
        "note_y": round((BAR_PX + GAP_PX * 0.42) / plot, 4),
        "menu_y": round(1 + (TOP_PX - 6) / plot, 4),  # 下拉菜单贴着图的上边缘（纸面坐标）
        "legend_y": round(-34 / plot, 4),  # 图例在条形图的刻度下方、靠右
    }


def _layout(state: AttentionState, *, bottom: int = BOTTOM_PX, heat_px: int | None = None) -> dict:
    """随状态变化的版面：高度、两块面板的位置、刻度与范围、当前行的框、c_t 的说明。"""
    t, S, T = state.step, len(state.source), len(state.output)
    xs, ys = _categories(state.source), _categories(state.output)
    g = _geometry(T, bottom, heat_px)
    return {
        "height": g["height"],
        "legend": {"y": g["legend_y"]},
        "xaxis": {"tickvals": xs, "ticktext": state.source, "categoryarray": xs, "range": [-0.5, S - 0.5]},
        "yaxis": {
            "domain": g["heat"], "tickvals": ys, "ticktext": state.output, "categoryarray": ys,
            "range": [T - 0.5, -0.5],
        },
        "xaxis2": {"tickvals": xs, "ticktext": state.source, "categoryarray": xs, "range": [-0.5, S - 0.5]},
        "yaxis2": {"domain": g["bar"], "title": {"text": f"α_{t}j"}},
        "coloraxis": {"colorbar": {"y": g["heat"][0], "len": g["heat"][1] - g["heat"][0]}},
        "shapes": [
            {
                "type": "rect",
                "xref": "x domain",
                "yref": "y",
                "x0": -0.004,
                "x1": 1.004,
                "y0": t - 1.5,
                "y1": t - 0.5,
                "line": {"color": PALETTE[1], "width": 2.5},
                "fillcolor": "rgba(0,0,0,0)",
            }
        ],
        "annotations": [
            {
                "xref": "paper",
                "yref": "paper",
                "x": 0.0,
                "y": g["note_y"],
                "xanchor": "left",
                "yanchor": "middle",
                "showarrow": False,
                "align": "left",
                "font": {"size": 13},
                "text": f"第 {t} 步输出「{state.output[t - 1]}」，它读到的 c_{t} = {_context_terms(state)}",
            }
        ],
    }


def _heatmap(state: AttentionState) -> go.BaseTraceType:
    heat = attention_heatmap(
        state.alpha, state.output, state.source, row_title="目标词（第 t 步）", col_title="源字 j"
    ).data[0]
    heat.update(
        x=_categories(state.source),
        y=_categories(state.output),
        text=_hover_text(state),
        hovertemplate="%{text}<br>α = %{z:.3f}<extra></extra>",
        coloraxis="coloraxis",  # 色条属于版面而不属于某一条轨迹：切换例句时它始终在
    )
    return heat


def _gold(state: AttentionState) -> go.Scatter:
    gx, gy = _gold_xy(state)
    return go.Scatter(
        x=gx,
        y=gy,
        mode="markers",
        marker={"symbol": "circle-open", "size": 15, "color": PALETTE[1], "line": {"width": 2}},
        name="标准对齐（训练时从未给出）",
        hovertemplate="标准对齐：%{y} ← %{x}<extra></extra>",
    )


def _bar_trace(state: AttentionState, t: int) -> go.Bar:
    return go.Bar(
        **_bar(state, t),
        xaxis="x2",
        yaxis="y2",
        marker_color=PALETTE[0],
        text=[f"{a:.2f}" if a >= 0.05 else "" for a in state.alpha[t - 1]],
        textposition="outside",
        cliponaxis=False,
        textfont={"size": 11},
        hovertemplate="α = %{y:.3f}<extra>%{x}</extra>",
        showlegend=False,
    )


def _base_layout() -> dict:
    return {
        "xaxis": {"domain": [0.0, 1.0], "type": "category", "tickmode": "array", "side": "top", "tickangle": 0,
                  "title": {"text": "源字 j", "standoff": 2}},
        "yaxis": {"type": "category", "tickmode": "array", "title": {"text": "目标词（第 t 步）", "standoff": 6}},
        "xaxis2": {
            "domain": [0.0, 1.0], "anchor": "y2", "type": "category", "tickmode": "array", "tickangle": 0,
        },
        "yaxis2": {"anchor": "x2", "range": [0, 1.18], "tickvals": [0, 0.5, 1], "showgrid": True},
        "legend": {"orientation": "h", "x": 1.0, "xanchor": "right", "yanchor": "top", "font": {"size": 12}},
        "margin": {"t": TOP_PX, "b": BOTTOM_PX, "l": 70, "r": 70},
        "coloraxis": {
            "cmin": 0.0, "cmax": 1.0, "colorscale": ATTENTION_SCALE,
            "colorbar": {"x": 1.0, "xanchor": "left", "yanchor": "bottom", "lenmode": "fraction", "thickness": 12,
                         "title": {"text": "α_tj", "side": "top"}},
        },
        "bargap": 0.25,
    }


def attention_figure(state: AttentionState) -> go.Figure:
    """上：α 热力图（当前行加框）与标准对齐；下：第 t 行的权重条形图，与热力图的列上下对齐。

    轨迹固定是三条：热力图、标准对齐的空心圆、当前步的条形图（实时面据此原地更新）。
    """
    fig = go.Figure([_heatmap(state), _gold(state), _bar_trace(state, state.step)])
    fig.update_layout(_base_layout())
    fig.update_layout(_layout(state))
    fig.update_layout(title={"text": f"{SHORT[state.model]}翻译「{''.join(state.source)}」", "x": 0.0, "xanchor": "left",
                             "y": 0.995, "yanchor": "top", "yref": "container"})
    return fig


def _context_terms(state: AttentionState) -> str:
    row = state.alpha[state.step - 1]
    top = sorted(range(len(row)), key=lambda j: -row[j])[:TOP]
    terms = " + ".join(f"{row[j]:.2f}·h_{j + 1}「{state.source[j]}」" for j in top)
    return terms + (" + …" if len(row) > TOP else "")


def length_figure(
    curves: dict[str, dict[int, float]], *, title: str, colors: list[int] | None = None
) -> go.Figure:
    """准确率随源句长度变化的折线图：``curves`` 是 ``{图例: {长度: 准确率}}``。

    ``colors`` 是每条曲线在全书调色板里的序号（让同一个模型在几张图里颜色一致）。
    """
    fig = go.Figure()
    for k, (label, acc) in enumerate(curves.items()):
        fig.add_trace(
            go.Scatter(
                x=list(acc),
                y=list(acc.values()),
                mode="lines+markers",
                name=label,
                line={"color": PALETTE[colors[k] if colors else k % len(PALETTE)]},
                hovertemplate=f"{label}<br>长度 %{{x}}：%{{y:.3f}}<extra></extra>",
            )
        )
    fig.update_xaxes(title_text="源句长度（字数）", dtick=3)
    fig.update_yaxes(title_text="逐词准确率（贪心解码）", range=[0, 1.02])
    fig.update_layout(
        title=title, height=420, legend={"x": 0.01, "y": 0.02, "xanchor": "left", "yanchor": "bottom"}
    )
    return fig


@register
class AttentionWeightsExplorer(Explorer):
    name = "attention_weights"
    title = "注意力权重 α_tj：解码每一步读源句的哪里"
    examples: ClassVar[list[dict]] = [
        {"text": task.EXAMPLES[0], "step": 3},
        {"text": task.EXAMPLES[1], "step": 5},
        {"text": task.EXAMPLES[2], "step": 19},
        {"text": "小猫看大鱼", "step": 2},
        {"text": task.EXAMPLES[1], "step": 4, "model": encdec.NAME},
    ]

    def controls(self):
        return {
            "text": widgets.Text(value=task.EXAMPLES[1], description="源句", continuous_update=False),
            # 松开滑块才更新：拖动途中的每个值都重画一遍，最后一个值反而要排在它们后面才画出来
            "step": widgets.IntSlider(value=1, min=1, max=task.MAX_LEN, description="第 t 步", continuous_update=False),
            "model": widgets.Dropdown(options=[(label, name) for name, label in MODELS.items()], value=MODEL,
                                      description="模型"),
        }

    def compute(self, text: str, step: int = 1, model: str = MODEL) -> AttentionState:
        return attention_state(text, step, model)

    def figure(self, state: AttentionState) -> go.Figure:
        return attention_figure(state)

    def caption(self, state: AttentionState) -> str:
        words = f"{SHORT[state.model]}：{' '.join(state.output)}{_score(state.output, state.reference)}；"
        words += f"固定上下文模型：{' '.join(state.baseline)}{_score(state.baseline, state.reference)}。"
        if state.reference is None:
            words += "这句话不合玩具语法，没有标准译文，只能看模型怎样分配权重。"
        if state.clamped:
            words += f"这句只有 {len(state.source)} 个目标词，滑块停在最后一步。"
        return words

    def update(self, fig: go.Figure, state: AttentionState) -> None:
        """只替换数据数组与少数版面属性，不重建图（实时更新的预算是 50 ms）。

        只拖动步数滑块时（源句没变），热力图与坐标轴都不用动：只换条形图、框的位置和说明文字。
        """
        heat, gold, bar = fig.data
        fresh = _bar_trace(state, state.step)
        bar.update(x=fresh.x, y=fresh.y, text=fresh.text, name=fresh.name)
        if getattr(fig, "_seqlab_source", None) == (state.source, state.model):
            t, layout = state.step, _layout(state)
            fig.layout.shapes[0].update(y0=t - 1.5, y1=t - 0.5)
            fig.layout.annotations[0].text = layout["annotations"][0]["text"]
            fig.layout.yaxis2.title.text = layout["yaxis2"]["title"]["text"]
            return
        heat.update(z=state.alpha, x=_categories(state.source), y=_categories(state.output), text=_hover_text(state))
        gold.x, gold.y = _gold_xy(state)
        # 扁平路径的 relayout 比嵌套字典的 layout.update 快约 4 倍（少了逐层校验）
        fig.plotly_relayout({**_flat(_layout(state)), "title.text": f"{SHORT[state.model]}翻译「{''.join(state.source)}」"})
        fig._seqlab_source = (list(state.source), state.model)

    def static_figure(self, model: str = MODEL) -> go.Figure:
        """网页上的静态面：上方的下拉菜单选例句，下方的滑块选解码步 t；``model`` 选权重来自哪个模型
        （第 1.4 节用 Bahdanau 注意力，第 1.6 节用 Transformer 的交叉注意力）。

        图里始终只有三条轨迹（热力图、标准对齐、条形图）。下拉菜单换掉三条轨迹的数据，滑块只换
        条形图的高度；每个例句有自己的滑块（步数随句长而变），下拉菜单只让当前例句的滑块可见。
        版面属性一律用 ``"xaxis.range"`` 这样的扁平路径切换——传整个 ``xaxis`` 字典会把坐标轴的
        其余设置（位置、对齐方式）一并抹掉。
        """
        bases = [attention_state(text, 1, model) for text in task.EXAMPLES]
        bottom = BOTTOM_PX + 40  # 为滑块留出位置
        heat_px = ROW_PX * 16  # 固定高度：最长的例句每行约 21 像素，最短的每行约 67 像素
        k0, t0 = 1, 5  # 打开网页时：第 2 句的第 5 步（动词被挪到了分句末尾）

        def layout_args(state: AttentionState) -> dict:
            layout = _flat(_layout(state, bottom=bottom, heat_px=heat_px))
            layout["updatemenus[0].y"] = _geometry(len(state.output), bottom, heat_px)["menu_y"]
            return layout

        def step_args(k: int, t: int) -> list:
            state = replace(bases[k], step=t)
            bar = _bar_trace(state, t)
            return [{"y": [list(bar.y)], "text": [list(bar.text)]}, layout_args(state), [2]]

        def example_args(k: int) -> list:
            state = bases[k]
            heat, gold, bar = _heatmap(state), _gold(state), _bar_trace(state, 1)
            data = {
                "x": [list(heat.x), list(gold.x), list(bar.x)],
                "y": [list(heat.y), list(gold.y), list(bar.y)],
                "z": [state.alpha, None, None],
                "text": [[list(r) for r in heat.text], None, list(bar.text)],
            }
            layout = layout_args(state)
            layout.update({f"sliders[{i}].visible": i == k for i in range(len(bases))})
            layout[f"sliders[{k}].active"] = 0
            return [data, layout, [0, 1, 2]]

        def slider(k: int) -> dict:
            return {
                "visible": k == k0,
                "active": t0 - 1 if k == k0 else 0,
                "steps": [
                    {"label": str(t), "method": "update", "args": step_args(k, t)}
                    for t in range(1, len(bases[k].source) + 1)
                ],
                "name": "解码步",
                "currentvalue": {"prefix": "解码第 ", "suffix": " 步", "font": {"size": 13}},
                "pad": {"t": 34, "b": 0},
                "len": 1.0,
                "x": 0.0,
                "y": 0.0,
                "yanchor": "top",
                "font": {"size": 11},
            }

        state0 = replace(bases[k0], step=t0)
        fig = attention_figure(state0)
        fig.update_layout(_layout(state0, bottom=bottom, heat_px=heat_px))
        fig.update_layout(
            title=None,
            margin={"b": bottom},
            height=_geometry(len(state0.output), bottom, heat_px)["height"],
            sliders=[slider(k) for k in range(len(bases))],
            updatemenus=[
                {
                    "name": "例句",
                    "type": "dropdown",
                    "buttons": [
                        {"label": f"例句 {k + 1}：{''.join(b.source)}", "method": "update", "args": example_args(k)}
                        for k, b in enumerate(bases)
                    ],
                    "active": k0,
                    "x": 0.0,
                    "xanchor": "left",
                    "y": _geometry(len(state0.output), bottom, heat_px)["menu_y"],
                    "yanchor": "top",
                    "pad": {"t": 4, "l": 0},
                    "font": {"size": 13},
                    "showactive": True,
                }
            ],
        )
        return fig


def _flat(layout: dict, prefix: str = "") -> dict:
    """把坐标轴、色条与图例的嵌套字典展开成 ``{"xaxis.range": …, "coloraxis.colorbar.y": …}`` 这样的扁平路径。"""
    out = {}
    for key, value in layout.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and (prefix or key.startswith(("xaxis", "yaxis", "coloraxis", "legend"))):
            out.update(_flat(value, f"{path}."))
        else:
            out[path] = value
    return out
