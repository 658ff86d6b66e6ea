/* 本书每一页都（延迟）加载的小脚本：让两个侧栏开关在任何屏幕上都能用。
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
})();
