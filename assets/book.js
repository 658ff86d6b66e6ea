/* 本书每一页都（延迟）加载的小脚本：让两个侧栏开关在任何屏幕上都能用；放不下的长公式能用键盘滚动；
 * 搜索结果的摘要只取正文。
 *
 * 主题的脚本只给页面上“第一个” .primary-toggle / .secondary-toggle 绑定了点击事件，而第一个往往是
 * 页眉里隐藏的那一份，读者看得见的开关点了没有反应。这里让其余的开关把点击转交给绑定了事件的那一个：
 * 宽屏上收起或展开侧栏，窄屏上打开侧栏的对话框。
 */
(() => {
  "use strict";
  for (const selector of [".primary-toggle", ".secondary-toggle"]) {
    const [bound, ...others] = document.querySelectorAll(selector);
    for (const button of others) {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopImmediatePropagation();
        bound.click();
      }, true);
    }
  }

  // 页眉按钮的提示框（Bootstrap tooltip）在没有悬停的触屏上没有用处，反而有害：手指一碰就出现，关掉本页目录的
  // 对话框（Esc）后还停在页眉上挡住别的按钮；有的手机浏览器把第一次轻点当成“悬停”，只弹出提示、不执行按钮。
  // 触屏上不建它们（按钮的名字在 aria-label 里）：主题的 bootstrap.js 在本脚本之后才给带 data-bs-toggle="tooltip"
  // 的元素建提示框；万一已经建好了，就拆掉。
  if (window.matchMedia("(hover: none)").matches) {
    for (const el of document.querySelectorAll('[data-bs-toggle="tooltip"]')) {
      const tip = window.bootstrap && bootstrap.Tooltip.getInstance(el);
      if (tip) tip.dispose();
      el.removeAttribute("data-bs-toggle");
    }
  }
  // 对话框（侧栏、本页目录）关上时，焦点回到打开它的按钮：不让这时冒出来的提示框留在页眉上
  document.addEventListener("close", () => {
    setTimeout(() => {
      for (const el of document.querySelectorAll('[data-bs-toggle="tooltip"]')) {
        const tip = window.bootstrap && bootstrap.Tooltip.getInstance(el);
        if (tip) tip.hide();
      }
    }, 0);
  }, true);

  // 手机上略宽一点的公式缩小字号放进一行（最多缩到 MIN_MATH_SCALE，再小就看不清了）；仍然放不下的可以左右滚动：
  // 让它能用键盘聚焦（然后用方向键滚动），只给真的放不下的公式，免得多出一串 Tab 停靠点。
  // 公式在构建时已排好版（字号用 em）：字体加载好后量一次，屏幕宽度变了再量一次。
  const MIN_MATH_SCALE = 0.7;
  if (document.querySelector(".math")) {
    const markScrollable = () => {
      const formulas = [...document.querySelectorAll('mjx-container[display="true"]')];
      for (const m of formulas) m.style.removeProperty("font-size");  // 先量原来的宽度（屏幕可能变宽了）
      const sizes = formulas.map((m) => [m.scrollWidth, m.clientWidth, parseFloat(getComputedStyle(m).fontSize)]);
      formulas.forEach((m, i) => {
        const [need, room, size] = sizes[i];
        const scale = room / need;
        if (need > room + 1 && scale >= MIN_MATH_SCALE) m.style.fontSize = `${(size * scale * 0.99).toFixed(2)}px`;
      });
      for (const m of formulas) {
        if (m.scrollWidth > m.clientWidth + 1) m.setAttribute("tabindex", "0");
        else m.removeAttribute("tabindex");
      }
    };
    document.fonts.ready.then(() => {
      markScrollable();
      let timer = 0;
      window.addEventListener("resize", () => { clearTimeout(timer); timer = setTimeout(markScrollable, 200); });
    });
  }

  // 搜索页：摘要取自正文，不要打印用的目录、代码单元格和公式的 LaTeX 源码。searchtools.js 用 const 声明
  // Search，它不是 window 的属性，只能直接用名字取（本脚本延迟执行，在它之后、搜索开始之前运行）。
  const search = typeof Search !== "undefined" ? Search : null;
  if (search && search.htmlToText) {
    // 术语表的词条排在各节之后：手机上先看到正文里的结果，而不是先翻过几屏术语
    if (typeof Scorer !== "undefined") {
      const glossary = /(^|\/)appendix\/glossary$/;
      Scorer.score = (result) => (glossary.test(result[0]) ? result[4] - 1000 : result[4]);
    }
    const toText = search.htmlToText;
    search.htmlToText = (html, anchor) => {
      const doc = new DOMParser().parseFromString(html, "text/html");
      doc.querySelectorAll("#jb-print-docs-body, .onlyprint, .cell_input, .seqlab-figure, .toctree-wrapper").forEach((e) => e.remove());
      doc.querySelectorAll(".math, mjx-container").forEach((e) => e.replaceWith("（公式）"));
      return toText(doc.documentElement.outerHTML, anchor);
    };
  }
})();
