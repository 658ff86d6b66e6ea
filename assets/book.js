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

  // 手机上放不下的长公式可以左右滚动：让它能用键盘聚焦（然后用方向键滚动），只给真的放不下的公式，
  // 免得多出一串 Tab 停靠点。公式在构建时已排好版：字体加载好后标一次，屏幕宽度变了再标一次。
  if (document.querySelector(".math")) {
    const markScrollable = () => {
      for (const m of document.querySelectorAll('mjx-container[display="true"]')) {
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

  // 搜索页：摘要取自正文，不要打印用的目录、代码单元格和公式的 LaTeX 源码。
  if (window.Search && Search.htmlToText) {
    const toText = Search.htmlToText;
    Search.htmlToText = (html, anchor) => {
      const doc = new DOMParser().parseFromString(html, "text/html");
      doc.querySelectorAll("#jb-print-docs-body, .onlyprint, .cell_input, .seqlab-figure, .toctree-wrapper").forEach((e) => e.remove());
      doc.querySelectorAll(".math, mjx-container").forEach((e) => e.replaceWith("（公式）"));
      return toText(doc.documentElement.outerHTML, anchor);
    };
  }
})();
