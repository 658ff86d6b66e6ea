// 本书自己的 JupyterLab 前端扩展的“容器”：不经打包工具，手写 JupyterLab 4 加载预构建扩展时要的接口。
//
// JupyterLab 按 package.json 的 jupyterlab._build.load 用 <script> 加载本文件，然后调用
// window._JUPYTERLAB[名字].init(共享作用域) 与 .get("./extension")，后者返回 Promise<() => 模块>，
// 模块的 default 是插件对象。本扩展不从共享作用域取任何包（只用 app 对象本身），init 什么也不做。
// 插件本身在旁边的 plugin.js（ES 模块）；安装脚本（tools/labext.py）把本文件改名为
// remoteEntry.<内容哈希>.js，同一个哈希用作 plugin.js 与 references.json 的版本参数，浏览器不会用到旧文件。
(function () {
  "use strict";
  var NAME = "seqlab-lab";
  var src = document.currentScript && document.currentScript.src;
  var base = src.slice(0, src.lastIndexOf("/") + 1);
  var version = (src.match(/remoteEntry\.([0-9a-f]+)\.js/) || [])[1] || "dev";
  var modules = {
    "./extension": function () {
      return import(base + "plugin.js?v=" + version).then(function (m) {
        return function () {
          return { __esModule: true, default: m.makePlugin({ base: base, version: version }) };
        };
      });
    }
  };
  window._JUPYTERLAB = window._JUPYTERLAB || {};
  window._JUPYTERLAB[NAME] = {
    init: function () {},
    get: function (module) {
      var load = modules[module];
      return load ? load() : Promise.reject(new Error(NAME + " 没有模块 " + module));
    }
  };
})();
