// 构建网站时把公式排好版（MathJax 3 的 CommonHTML 输出，npm 的 mathjax-full 包，版本锁在 package-lock.json）：
// 读者的浏览器不再下载、运行 MathJax（约 750 KB 的脚本），公式随 HTML 一起到达，没有排版前后的跳动。
//
// 用法：node tools/mathjax.mjs 网站目录 页面.html…（tools/book_ext.py 在构建结束时调用）。
// 每个页面里 class="math" 的元素中的 \(…\) 与 \[…\] 换成排好的 <mjx-container>（带给读屏软件的隐藏 MathML），
// 在 <head> 里放上这一页用到的那些字符的样式（几 KB 到二十几 KB）；
// 字体（woff）复制到 _static/seqlab/mathjax-fonts/，样式按相对路径引用它们，只在页面用到时下载。
// 每页自带自己的样式，所以增量构建只重写了一部分页面时，其余页面照样完整。
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";

const require = createRequire(import.meta.url);
const { mathjax } = require("mathjax-full/js/mathjax.js");
const { TeX } = require("mathjax-full/js/input/tex.js");
const { CHTML } = require("mathjax-full/js/output/chtml.js");
const { liteAdaptor } = require("mathjax-full/js/adaptors/liteAdaptor.js");
const { RegisterHTMLHandler } = require("mathjax-full/js/handlers/html.js");
const { AssistiveMmlHandler } = require("mathjax-full/js/a11y/assistive-mml.js");
const { AllPackages } = require("mathjax-full/js/input/tex/AllPackages.js");

const FONTS = join(dirname(require.resolve("mathjax-full/package.json")), "es5/output/chtml/fonts/woff-v2");
const FONT_DIR = "_static/seqlab/mathjax-fonts";
const MATH = /(<(span|div) class="math notranslate nohighlight"[^>]*>)([\s\S]*?)(<\/\2>)/g;
const TEX = /\\\(([\s\S]*?)\\\)|\\\[([\s\S]*?)\\\]/g;
const ENTITIES = { "&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"', "&#39;": "'" };

const adaptor = liteAdaptor();
AssistiveMmlHandler(RegisterHTMLHandler(adaptor));

/** 一个页面的 MathJax 文档：字体按这一页到字体文件夹的相对路径引用；样式只含这一页用到的字符。 */
function mathDocument(fontURL) {
  return mathjax.document("", {
    InputJax: new TeX({ packages: AllPackages.filter((p) => p !== "bussproofs") }),
    OutputJax: new CHTML({ fontURL, adaptiveCSS: true }),
  });
}

function typeset(document, tex, display) {
  const source = tex.replace(/&(lt|gt|amp|quot|#39);/g, (e) => ENTITIES[e]);
  const node = document.convert(source, { display });
  const errors = adaptor.tags(node, "mjx-merror");
  if (errors.length) throw new Error(`公式有错：${source.trim()}（${adaptor.textContent(errors[0])}）`);
  return adaptor.outerHTML(node);
}

/** 排好版的页面；页面里没有要排的公式时返回 null（例如上一次构建已经排过、这次没有重写的页面）。 */
function prerender(html, page, site) {
  const document = mathDocument(relative(dirname(page), join(site, FONT_DIR)).split("\\").join("/"));
  let count = 0;
  const out = html.replace(MATH, (_, open, tag, body, close) => {
    const rendered = body.replace(TEX, (whole, inline, display) => {
      count++;
      return typeset(document, inline ?? display, inline === undefined);
    });
    return open + rendered + close;
  });
  if (!count) return null;
  const style = adaptor.textContent(document.outputJax.styleSheet(document));
  return out.replace("</head>", `<style id="MJX-CHTML-styles">${style}</style>\n</head>`);
}

const [site, ...pages] = process.argv.slice(2);
let typesetPages = 0;
for (const page of pages) {
  const html = prerender(readFileSync(page, "utf-8"), page, site);
  if (html === null) continue;
  writeFileSync(page, html);
  typesetPages++;
}
mkdirSync(join(site, FONT_DIR), { recursive: true });
for (const font of readdirSync(FONTS)) copyFileSync(join(FONTS, font), join(site, FONT_DIR, font));
console.log(`MathJax：${typesetPages} 个页面的公式已在构建时排好版`);
