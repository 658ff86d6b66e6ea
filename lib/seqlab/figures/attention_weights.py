"""第 1.4、1.6 节“注意力权重”的图：上方是 α 热力图，下方是第 t 步那一行权重的条形图。

热力图的行是模型逐步生成的目标词，列是源句的字，格子的颜色是 α_tj；空心圆标出玩具任务的标准对齐
（模型训练时从没见过它）。条形图与热力图共用同一组源字列、上下对齐——``c_t`` 就是按这些比例把各个
``h_j`` 加起来。图里固定是三条轨迹：热力图、标准对齐、条形图（``patch`` 与静态面据此只换数据）。
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from seqlab.figures.heatmap import attention_heatmap
from seqlab.figures.style import ATTENTION_SCALE, PALETTE
from seqlab.states.attention_weights import MODEL, AttentionState
from seqlab.train.encdec_transformer import NAME as TRANSFORMER

SHORT = {MODEL: "注意力模型", TRANSFORMER: "Transformer"}  # 标题与说明里的模型名

# 版面（像素）：上方是 α 热力图，下方是当前这一步的条形图，两者共用同一组源字列，上下对齐。
ROW_PX, BAR_PX, GAP_PX, TOP_PX, BOTTOM_PX = 25, 130, 74, 96, 70
MIN_HEAT_PX = 190


def _categories(labels: list[str]) -> list[str]:
    """坐标用的类别名 ``序号·token``（从 1 数，与正文的 t、j 一致）：重复的 token 不会被 plotly 合并成一格。"""
    return [f"{i}·{c}" for i, c in enumerate(labels, start=1)]


def _gold_xy(state: AttentionState) -> tuple[list[str], list[str]]:
    if state.gold is None:
        return [], []
    xs, ys = _categories(state.source), _categories(state.output)
    return [xs[j] for j in state.gold], ys


def _hover_text(state: AttentionState) -> list[list[str]]:
    return [
        [f"第 {t} 步（输出 {w}）读 h_{j}「{c}」" for j, c in enumerate(state.source, start=1)]
        for t, w in enumerate(state.output, start=1)
    ]


def _title(state: AttentionState) -> str:
    return f"{SHORT[state.model]}翻译「{''.join(state.source)}」"


def _context_terms(state: AttentionState) -> str:
    """c_t 里权重最大的几项，例如 ``0.91·h_2「猫」 + 0.05·h_1「大」 + …``。"""
    row = state.alpha[state.step - 1]
    terms = " + ".join(f"{row[j]:.2f}·h_{j + 1}「{state.source[j]}」" for j in state.top)
    return terms + (" + …" if len(row) > len(state.top) else "")


def geometry(T: int, bottom: int = BOTTOM_PX, heat_px: int | None = None) -> dict[str, Any]:
    """``T`` 个目标词时各块的位置。``heat_px`` 给定时热力图高度固定（静态面：切换例句时整张图的高度不能变，
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


def _row_name(t: int) -> str:
    return f"α_{t}j"


def _note(state: AttentionState) -> str:
    t = state.step
    return f"第 {t} 步输出「{state.output[t - 1]}」，它读到的 c_{t} = {_context_terms(state)}"


def layout(state: AttentionState, *, bottom: int = BOTTOM_PX, heat_px: int | None = None) -> dict[str, Any]:
    """随状态变化的版面：高度、两块面板的位置、刻度与范围、当前行的框、c_t 的说明。"""
    t, S, T = state.step, len(state.source), len(state.output)
    xs, ys = _categories(state.source), _categories(state.output)
    g = geometry(T, bottom, heat_px)
    columns = {"tickvals": xs, "ticktext": state.source, "categoryarray": xs, "range": [-0.5, S - 0.5]}
    frame = {
        "type": "rect", "xref": "x domain", "yref": "y", "x0": -0.004, "x1": 1.004, "y0": t - 1.5, "y1": t - 0.5,
        "line": {"color": PALETTE[1], "width": 2.5}, "fillcolor": "rgba(0,0,0,0)",
    }
    note = {
        "xref": "paper", "yref": "paper", "x": 0.0, "y": g["note_y"], "xanchor": "left", "yanchor": "middle",
        "showarrow": False, "align": "left", "font": {"size": 13}, "text": _note(state),
    }
    return {
        "height": g["height"],
        "legend": {"y": g["legend_y"]},
        "xaxis": columns,
        "yaxis": {"domain": g["heat"], "tickvals": ys, "ticktext": state.output, "categoryarray": ys,
                  "range": [T - 0.5, -0.5]},
        "xaxis2": dict(columns),
        "yaxis2": {"domain": g["bar"], "title": {"text": _row_name(t)}},
        "coloraxis": {"colorbar": {"y": g["heat"][0], "len": g["heat"][1] - g["heat"][0]}},
        "shapes": [frame],
        "annotations": [note],
    }


def flat(nested: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """把坐标轴、色条与图例的嵌套字典展开成 ``{"xaxis.range": …, "coloraxis.colorbar.y": …}`` 这样的扁平路径。"""
    out: dict[str, Any] = {}
    for key, value in nested.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and (prefix or key.startswith(("xaxis", "yaxis", "coloraxis", "legend"))):
            out.update(flat(value, f"{path}."))
        else:
            out[path] = value
    return out


def heatmap(state: AttentionState) -> go.Heatmap:
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


def gold(state: AttentionState) -> go.Scatter:
    gx, gy = _gold_xy(state)
    return go.Scatter(
        x=gx,
        y=gy,
        mode="markers",
        marker={"symbol": "circle-open", "size": 15, "color": PALETTE[1], "line": {"width": 2}},
        name="标准对齐（训练时从未给出）",
        hovertemplate="标准对齐：%{y} ← %{x}<extra></extra>",
    )


def bar(state: AttentionState) -> go.Bar:
    """第 t 步那一行权重 α_tj 的条形图。"""
    row = state.alpha[state.step - 1]
    return go.Bar(
        x=_categories(state.source),
        y=row,
        name=_row_name(state.step),
        xaxis="x2",
        yaxis="y2",
        marker_color=PALETTE[0],
        text=[f"{a:.2f}" if a >= 0.05 else "" for a in row],
        textposition="outside",
        cliponaxis=False,
        textfont={"size": 11},
        hovertemplate="α = %{y:.3f}<extra>%{x}</extra>",
        showlegend=False,
    )


def _base_layout() -> dict[str, Any]:
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


def render(state: AttentionState) -> go.Figure:
    """上：α 热力图（当前行加框）与标准对齐；下：第 t 行的权重条形图，与热力图的列上下对齐。"""
    fig = go.Figure([heatmap(state), gold(state), bar(state)])
    fig.update_layout(_base_layout())
    fig.update_layout(layout(state))
    fig.update_layout(title={"text": _title(state), "x": 0.0, "xanchor": "left",
                             "y": 0.995, "yanchor": "top", "yref": "container"})
    return fig


def patch(fig: go.Figure, old: AttentionState, new: AttentionState) -> None:
    """只替换数据数组与少数版面属性，不重建图（实时更新的预算是 50 ms）。

    源句与模型都没变（只换了步数）时，热力图与坐标轴都不用动：只换条形图、框的位置和说明文字。
    """
    heat_trace, gold_trace, bar_trace = fig.data
    fresh = bar(new)
    bar_trace.update(x=fresh.x, y=fresh.y, text=fresh.text, name=fresh.name)
    if (old.source, old.model) == (new.source, new.model):
        fig.layout.shapes[0].update(y0=new.step - 1.5, y1=new.step - 0.5)
        fig.layout.annotations[0].text = _note(new)
        fig.layout.yaxis2.title.text = _row_name(new.step)
        return
    heat_trace.update(z=new.alpha, x=_categories(new.source), y=_categories(new.output), text=_hover_text(new))
    gold_trace.x, gold_trace.y = _gold_xy(new)
    # 扁平路径的 relayout 比嵌套字典的 layout.update 快约 4 倍（少了逐层校验）
    fig.plotly_relayout({**flat(layout(new)), "title.text": _title(new)})


def _score(right: int | None, reference: list[str] | None) -> str:
    return "" if right is None or reference is None else f"（{right}/{len(reference)} 个词与标准译文一致）"


def caption(state: AttentionState) -> str:
    words = f"{SHORT[state.model]}：{' '.join(state.output)}{_score(state.right, state.reference)}；"
    words += f"固定上下文模型：{' '.join(state.baseline)}{_score(state.baseline_right, state.reference)}。"
    if state.reference is None:
        words += "这句话不合玩具语法，没有标准译文，只能看模型怎样分配权重。"
    if state.clamped:
        words += f"这句只有 {len(state.source)} 个目标词，滑块停在最后一步。"
    return words
