/* 第 1.6 节“交叉注意力权重 α_tj”的网页实时面：与第 1.4 节的 attention_weights 是同一份说明（只差“模型”的默认值），
 * 所以计算、图与说明都用 attention_weights.mjs 的。 */
export { caption, figure, load, state } from "./attention_weights.mjs";

/** 网页上提供的参数：必须与 Python 说明里的 WebFace.params 相同（tests/test_live_web.py 检查）。 */
export const PARAMS = ["text", "step", "model"];
