/* 第 1.6 节“小 GPT 逐步生成”的网页实时面：seqlab/states/gpt_steps.py 的 gpt_step_state，seqlab/gpt.py 的
 * encode_prompt、next_token_probs、sample_index 与 generate_steps，以及 seqlab/figures/gpt_steps.py 的 patch、caption 的对应。
 *
 * 与 Python 一样带 KV cache 生成（nn.mjs 的 KVCache）：第 0 步把 〈始〉 + 提示整段送入，之后每步只送入上一步选出的
 * token，所以每一步“从缓存读几行、新算几行”读的是真实缓存的长度。采样用 random.mjs（Python 的 random.Random）：
 * 同一个种子每步取同一个随机数，逆 CDF 选出同一个 token。整次生成按提示与解码设置缓存（Python 的 lru_cache），
 * 拖“第几步”的滑块只是取出其中一步。 */
import { InputError } from "./errors.mjs";
import { KVCache, loadModel, tinyDecoder } from "./nn.mjs";
import { fixed, formatG } from "./pyformat.mjs";
import { Random } from "./random.mjs";
import { byCodePoint, cleanText } from "./states.mjs";

/** 网页上提供的参数：必须与 Python 说明里的 WebFace.params 相同（tests/test_live_web.py 检查）。 */
export const PARAMS = ["prompt", "step", "sample", "temperature", "top_k", "seed"];

const RUNS_KEPT = 64; // 缓存的整次生成个数（与 _run 的 lru_cache 相同）

// 图里的写法：特殊 token 怎样写（gpt.SHOWN）、候选与选中的柱子的颜色。load 时从 web_data() 读入
let looks = { shown: {}, colors: {} };
const show = (token) => looks.shown[token] ?? token;

/** 打开“实时计算”时准备一次：记下图里的写法，解出模型的权重、建好词表的反查表（之后每次输入都用同一份）。 */
export async function load(data) {
  looks = { shown: data.shown, colors: data.colors };
  model(data);
}

const models = new WeakMap(); // data → {net: 解开的模型, itos, stoi, runs: 缓存的整次生成}

function model(data) {
  if (!models.has(data)) {
    const itos = data.config.itos;
    models.set(data, { net: loadModel(data), itos, stoi: new Map(itos.map((t, i) => [t, i])), runs: new Map() });
  }
  return models.get(data);
}

// ---------------------------------------------------------------- 编码与解码（gpt.py）
/** encode_prompt：〈始〉 + 提示的 token 编号；语料里没有的字直接拒绝（中文说明）。chars 是码位数组。 */
function encodePrompt(data, m, chars) {
  const specials = data.specials.all;
  const unknown = [...new Set(chars.filter((ch) => !m.stoi.has(ch) || specials.includes(ch)))].sort(byCodePoint);
  if (unknown.length) {
    throw new InputError(`这些字在本书的语料里没有出现过，模型不认识：${unknown.join("")}。请换成语料里的字。`);
  }
  return [m.stoi.get(data.specials.bos), ...chars.map((ch) => m.stoi.get(ch))];
}

/** torch.softmax：先减去最大值；-Infinity 的格子得到 0。z 长 V → 新的 Float64Array。 */
function softmax(z) {
  const max = z.reduce((a, b) => Math.max(a, b), -Infinity);
  const e = z.map((x) => Math.exp(x - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

/** next_token_probs：logits 除以温度，只留最大的 top_k 个（与第 k 大的值相等的都留下：Python 用的是 “< 第 k 大的值”
 * 的掩码，与 topk 在并列时的先后无关），再 softmax。topK 为 null 时不截断。 */
export function nextTokenProbs(logits, temperature, topK) {
  const scaled = Float64Array.from(logits, (z) => z / temperature);
  if (topK !== null && topK < scaled.length) {
    const kth = Float64Array.from(scaled).sort().at(-topK); // 从大到小的第 k 个
    scaled.forEach((z, i) => {
      if (z < kth) scaled[i] = -Infinity;
    });
  }
  return softmax(scaled);
}

/** sample_index：第一个累积概率超过 u 的下标（按下标从小到大相加）；舍入让总和不到 u 时取最后一个概率不为 0 的下标。 */
export function sampleIndex(q, u) {
  let total = 0;
  for (let i = 0; i < q.length; i++) {
    total += q[i];
    if (total > u) return i;
  }
  return q.findLastIndex((w) => w > 0);
}

/** 分布 p 的前 n 名的下标，概率从高到低（并列时下标小的在前）。 */
function topIndices(p, n) {
  return Array.from(p.keys()).sort((i, j) => p[j] - p[i] || i - j).slice(0, n);
}

/** argmax：最大值相同时取第一个。 */
const argmax = (p) => p.indexOf(p.reduce((a, b) => Math.max(a, b), -Infinity));

/** generate_steps：从 ids（〈始〉 + 提示）出发带 KV cache 逐个生成，最多 max_steps 步，写出 〈终〉 就停。
 * 每一步与 gpt.Step 的 JSON 相同。 */
function generateSteps(data, m, ids, decoding) {
  const V = data.config.vocab_size;
  const rng = decoding.sample ? new Random(decoding.seed) : null;
  const cache = new KVCache();
  const context = ids.map((id) => m.itos[id]);
  const steps = [];
  let fresh = ids;
  for (let index = 0; index < data.max_steps; index++) {
    const cached = cache.length;
    const { logits, weights } = tinyDecoder(m.net, fresh, cache);
    const S = fresh.length;
    const T = cache.length;
    const z = logits.subarray((S - 1) * V, S * V); // 最后一个位置的 logits
    const p = softmax(z);
    const next = rng ? sampleIndex(nextTokenProbs(z, decoding.temperature, decoding.top_k), rng.random()) : argmax(p);
    const token = m.itos[next];
    steps.push({
      index,
      context: [...context],
      token,
      probs: topIndices(p, data.top).map((i) => [m.itos[i], p[i]]),
      chosen_prob: p[next],
      attention: weights.map((heads) => heads.map((alpha) => Array.from(alpha.subarray((S - 1) * T, S * T)))),
      cached,
      computed: T - cached,
    });
    context.push(token);
    if (token === data.specials.eos) break;
    fresh = [next];
  }
  return steps;
}

/** _run：同一个提示与解码设置的整次生成只算一次（最多留 RUNS_KEPT 个，先放进去的先丢）。 */
function run(data, m, chars, decoding) {
  const key = JSON.stringify([chars.join(""), decoding]);
  if (!m.runs.has(key)) {
    const steps = generateSteps(data, m, encodePrompt(data, m, chars), decoding);
    if (m.runs.size >= RUNS_KEPT) m.runs.delete(m.runs.keys().next().value);
    m.runs.set(key, steps);
  }
  return m.runs.get(key);
}

// ---------------------------------------------------------------- 状态（states/gpt_steps.py）
/** 与 gpt_step_state 相同：贪心时温度、top-k、种子不起作用（解码设置是 Decoding() 的默认值）。 */
export function state(values, data) {
  const chars = cleanText(values.prompt, { maxChars: data.max_prompt, what: "提示" });
  const prompt = chars.join("");
  const decoding = values.sample
    ? { sample: true, temperature: values.temperature, top_k: Number(values.top_k), seed: Number(values.seed) }
    : { sample: false, temperature: 1.0, top_k: null, seed: 0 };
  const steps = run(data, model(data), chars, decoding);
  const requested = Number(values.step);
  const shown = steps[Math.min(requested, steps.length - 1)];
  const written = steps.slice(0, shown.index + 1).filter((s) => s.token !== data.specials.eos);
  return {
    prompt,
    decoding,
    step: shown,
    last: steps.length - 1,
    text: prompt + written.map((s) => s.token).join(""),
    requested,
  };
}

// ---------------------------------------------------------------- 图（figures/gpt_steps.py）
export function caption(st) {
  const d = st.decoding;
  const how = d.sample ? `采样（温度 ${formatG(d.temperature)}，top-k = ${d.top_k}，种子 ${d.seed}）` : "贪心";
  let words = `${how}：到第 ${st.step.index} 步为止写出「${st.text}」`;
  if (st.requested > st.last) words += `；这次生成在第 ${st.last} 步写出〈终〉就停了，后面没有新的步`;
  return `${words}。`;
}

function title(st) {
  const s = st.step;
  const kind = s.index === 0 ? "Prefill" : "Decode";
  return `第 ${s.index} 步（${kind}）：写出「${show(s.token)}」，概率 ${fixed(s.chosen_prob, 2)}<br>`
    + `<sup>KV cache 里读 ${s.cached} 行，这一步新算 ${s.computed} 行</sup>`;
}

/** 状态 st 的整张图：由默认状态的图 base（Python 的 render 画出，写在网站里）改出变了的部分——与 patch 改的相同：
 * 候选的柱子（选中的字用第二种颜色）、每层每个头的注意力、每个位置的 K/V 从哪里来，两行的 x 轴刻度与标题。 */
export function figure(st, base) {
  const { colors } = looks;
  const fig = structuredClone(base);
  const s = st.step;
  const coords = s.context.map((ch, i) => `${i}:${ch}`);
  const computed = coords.map((_, i) => i >= s.cached);
  const [bar, heat, kv] = fig.data;
  Object.assign(bar, {
    x: s.probs.map(([t]) => show(t)),
    y: s.probs.map(([, p]) => p),
    text: s.probs.map(([, p]) => fixed(p, 2)),
    marker: { ...bar.marker, color: s.probs.map(([t]) => (t === s.token ? colors.chosen : colors.candidate)) },
  });
  Object.assign(heat, {
    z: s.attention.flat(),
    x: coords,
    y: s.attention.flatMap((layer, l) => layer.map((_, h) => `第 ${l + 1} 层·头 ${h + 1}`)),
  });
  Object.assign(kv, {
    z: [computed.map(Number)],
    x: coords,
    text: [computed.map((c) => (c ? "算" : "读"))],
    customdata: [computed.map((c) => (c ? "这一步新算" : "从缓存读"))],
  });
  const ticks = { tickvals: coords, ticktext: s.context.map(show) };
  Object.assign(fig.layout.xaxis2, ticks);
  Object.assign(fig.layout.xaxis3, ticks);
  fig.layout.title.text = title(st);
  return fig;
}
