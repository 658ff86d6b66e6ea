# 《从序列建模到 Transformer》——两个命令：make book（构建网站）与 make test（运行全部测试）。
# 每个目标在第一次使用时都会创建 .venv 并安装固定版本的依赖。

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# 本书自己的 JupyterLab 扩展（glue 的数值、参考文献、练习编号、与网站相同的图号和公式编号——编号由笔记本算出，
# 所以笔记本一变就重建），装进 .venv 的 labextensions（tools/labext.py）
LABEXT := $(VENV)/share/jupyter/labextensions/seqlab-lab/package.json
NODE   := node_modules/.package-lock.json
VENDOR := assets/live/vendor/.copied
HTML   := _build/html
PORT   ?= 8000
JOBS   ?= 2
# 严格模式（答错的检查抛出异常）只在执行完整版笔记本的地方打开：构建网站与 nbval。make lab 与学生一样，
# 答错只显示 ❌，“全部运行”照常走完。
STRICT := SEQLAB_STRICT_CHECKS=1
export PYDEVD_DISABLE_FILE_VALIDATION = 1

.PHONY: help setup book test test-lib test-js test-notebooks test-stress test-site test-lab lab serve bench student pdf clean

help:
	@echo "make book   创建环境并构建网站到 $(HTML)"
	@echo "make test   创建环境并运行全部测试（库、笔记本、网站、浏览器）"
	@echo "make lab    在 JupyterLab 中打开本书的笔记本"
	@echo "make serve  在 http://127.0.0.1:$(PORT) 上提供已构建的网站"
	@echo "make test-stress  同样的测试，只用一个核、以及在每个核都被占满时各跑一遍"
	@echo "make bench  计时：每个笔记本、每个实时探索器的更新、每个训练配方的 CPU 时间、每个页面的大小"
	@echo "make student 生成学生版笔记本（不含答案）到 _build/student"
	@echo "make grade SUBMISSIONS=文件夹  批量评分，写出成绩单与每个学生的反馈"
	@echo "make links HUB=https://… REPO=https://…  打印每一节的 nbgitpuller 链接"
	@echo "make test-hub 在本机启动 JupyterHub，模拟一个班同时上课并测量资源"
	@echo "make pdf    把网站打印成一份 PDF 讲义：_build/pdf/seqlab-ch01.pdf"
	@echo "make clean  删除构建产物（保留 .venv）"

setup: $(STAMP) $(LABEXT)

$(STAMP): requirements.txt constraints.txt pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] >= (3, 11), "需要 Python 3.11 或更新的版本"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

$(LABEXT): $(STAMP) tools/labext.py references.bib $(wildcard chapters/*/*.ipynb tools/jupyterlab/seqlab-lab/* tools/jupyterlab/seqlab-lab/static/*)
	$(BIN)/python tools/labext.py

# 网站用的 JavaScript（plotly.js 的部分包、浏览器测试用的 axe-core）按 package-lock.json 安装。
$(NODE): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(NODE)

# 网页实时面的第三方代码（jieba-wasm、@huggingface/tokenizers、ml-matrix）：package.json 的 "vendor" 列出的文件
# 复制到 assets/live/vendor/，网站与 node 的对照测试用同一份（tools/vendor.py）。
$(VENDOR): $(NODE) tools/vendor.py
	$(PYTHON) tools/vendor.py
	touch $(VENDOR)

# 构建时笔记本的执行结果按笔记本内容缓存；库（lib/）一变，缓存就作废，免得网页上是旧代码算出的结果。
LIBHASH = $(shell find lib -type f \( -name '*.py' -o -name '*.safetensors' -o -name '*.json' \) -not -path '*/__pycache__/*' | sort | xargs cat | sha1sum | cut -c1-16)

book: $(STAMP) $(NODE) $(VENDOR)
	@mkdir -p _build
	@if [ "$$(cat _build/.libhash 2>/dev/null)" != "$(LIBHASH)" ]; then rm -rf _build/.jupyter_cache _build/.doctrees; echo "$(LIBHASH)" > _build/.libhash; fi
	$(STRICT) $(BIN)/jupyter-book build . -W -n --keep-going
	@echo ""
	@echo "网站已构建到 $(HTML)。运行 make serve，然后在浏览器中打开 http://127.0.0.1:$(PORT)/"

# 每一步用了多少秒，最后列成一张表（CI 的日志只留最后一段，这张表在最后）。
TEST_STEPS := test-lib test-js test-notebooks test-grading book test-site test-lab
test: $(STAMP)
	@times=""; for step in $(TEST_STEPS); do \
	  start=$$(date +%s); $(MAKE) $$step || exit 1; \
	  times="$$times  make $$step：$$(( $$(date +%s) - start )) 秒\n"; \
	done; printf "\n每一步的用时：\n$$times"

# 静态检查：ruff（含分层的禁用 API）、import-linter 的分层契约、mypy 的类型检查（配置都在 pyproject.toml 里）。
test-lib: $(STAMP)
	$(BIN)/ruff check lib tests tools
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/pytest -n $(JOBS) -m "not slow and not browser" tests

# 网页实时面与 Python 面对照：Python 写出测试向量（随机、边界与坏的取值），node 自带的测试运行器逐项比较。
test-js: $(STAMP) $(VENDOR)
	$(BIN)/python tools/live_vectors.py
	node --test tests/js/*.test.mjs

# 完整版笔记本在严格模式下执行（紧跟起始代码的检查显示“还没有完成”，每个参考答案后面的检查必须通过）。
# 学生版在干净的学生环境里从头到尾执行、每个检查都报告 ❌，见 make test-lab（tests/test_student_env.py）。
test-notebooks: $(STAMP)
	$(STRICT) $(BIN)/pytest -n $(JOBS) --dist loadscope --nbval-lax --nbval-current-env chapters
	$(BIN)/pytest -n $(JOBS) -m slow tests/test_checkpoints.py tests/test_bench.py

# 压力测试：同样的库测试与笔记本，(a) 只给一个核，(b) 另有进程把每个核都占满。两者都必须通过。
test-stress: $(STAMP)
	$(BIN)/python tools/stress.py one-core -- $(MAKE) test-lib test-notebooks JOBS=1
	$(BIN)/python tools/stress.py busy -- $(MAKE) test-lib test-notebooks

# 浏览器测试分给 $(JOBS) 个进程（各开一个 Chromium）：在 2 核的机器上约快一半。这里约 9 分钟；超过 50 分钟
# 就不再开始新的测试、报告失败，并照样打印最慢的测试（CI 的总时限是 90 分钟，被整个杀掉时什么也看不到）。
test-site: $(STAMP) $(NODE)
	$(BIN)/pytest -rs -n $(JOBS) --durations=15 --session-timeout=3000 tests/test_site.py tests/test_browser.py tests/test_pdf.py

# 学生看到的笔记本：真实的 JupyterLab（127.0.0.1）+ 无头 Chromium；学生版在干净虚拟环境里的安装与运行。
test-lab: $(STAMP) $(LABEXT)
	$(BIN)/pytest -rs --durations=10 --session-timeout=1800 tests/test_lab.py tests/test_student_env.py

# 中文界面、不弹“Jupyter 新闻”：tools/jupyterlab/overrides.json 是默认值，在“设置”菜单里随时可以改回。
lab: $(STAMP) $(LABEXT)
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) --LabApp.app_settings_dir=$(CURDIR)/tools/jupyterlab chapters/ch01

# 与静态网站托管一样：浏览器接受 gzip 时发构建时预先压缩好的 .gz（tools/browser.py）
serve:
	@test -d $(HTML) || { echo "还没有构建网站：请先运行 make book"; exit 1; }
	@echo "在浏览器中打开 http://127.0.0.1:$(PORT)/ （Ctrl+C 停止）"
	$(BIN)/python tools/browser.py $(HTML) $(PORT)

bench: $(STAMP) $(NODE) $(LABEXT)
	$(BIN)/python tools/bench.py $(BENCH_ARGS)
	$(BIN)/pytest -q tests/test_lab.py -k run_all
	$(BIN)/python tools/lab_latency.py

student: $(STAMP)
	$(BIN)/python tools/student.py

pdf: $(STAMP)
	@test -f $(HTML)/index.html || $(MAKE) book
	$(BIN)/python tools/pdf.py

# 课堂：沙箱里的批量评分，JupyterHub 上的模拟班级，nbgitpuller 链接（见教师指南）。
.PHONY: grade test-grading test-hub links
grade: $(STAMP)
	@test -n "$(SUBMISSIONS)" || { echo "用法：make grade SUBMISSIONS=放提交的文件夹 [SECTION=1.1]"; exit 2; }
	$(BIN)/python tools/classroom/grade.py "$(SUBMISSIONS)" $(if $(SECTION),--section $(SECTION))

test-grading: $(STAMP)
	$(BIN)/pytest -rs tests/test_grading.py

test-hub: $(STAMP) $(NODE)
	$(BIN)/pytest -rs tests/test_hub.py
	@cat _build/hub/sizing.md

links: $(STAMP)
	@$(BIN)/python tools/classroom/links.py "$(HUB)" "$(REPO)" $(BRANCH)

clean:
	rm -rf _build .jupyter_cache
	find . -name __pycache__ -not -path "./.venv/*" -prune -exec rm -rf {} +
