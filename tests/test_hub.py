"""一个真的 JupyterHub，一个模拟的班级。

在 127.0.0.1 上用 hub/jupyterhub_config.py 启动 PyPI 的 JupyterHub（代理是 npm 的 configurable-http-proxy，
DummyAuthenticator 登录，SimpleLocalProcessSpawner 给每人一个服务器）。学生版放进一个本地 git 仓库；
``STUDENTS`` 个学生同时：在登录页登录 → 等自己的服务器启动 → 用 nbgitpuller 把书拉到主目录 → 在自己服务器
的内核里把一整节笔记本从头执行到尾（学生 k 做第 k mod 6 + 1 节）。

对每个学生测量：从登录到第一个单元格执行完的时间、执行整个笔记本的时间、内核用掉的 CPU 秒数、内核与服务器
的峰值内存（/proc 里的 VmHWM，不靠采样）。断言只针对计数：每个学生都跑完了、每个单元格都执行成功。
测得的数字写到 ``_build/hub/sizing.json``，hub/sizing.py 把它换算成 ``_build/hub/sizing.md``：教师指南里的表
（hub/sizing.md）就是它的一份拷贝。

另外，``tools/classroom/links.py`` 生成的 nbgitpuller 链接，在同一个 hub 上真的把书拉给一个新用户。
全部只用回环地址；每一步都有超时；测试结束时 hub、代理、所有服务器和内核都停掉。
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode, urlparse

import nbformat
import pytest

# 启动 hub 并模拟一个班的夹具可能要几分钟（机器忙时更久）：每个测试的时限放宽到 30 分钟（默认 10 分钟，见 pyproject.toml）。
pytestmark = pytest.mark.timeout(1800)

# 要启动 hub 的测试带 hub 与 slow 两个标记：slow 让它们留在 make test-lib 之外，make test-hub 单独运行它们。

requests = pytest.importorskip("requests")
websocket = pytest.importorskip("websocket")
psutil = pytest.importorskip("psutil")

import student  # noqa: E402
from classroom import links, questions  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hub"))
import sizing  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "hub" / "jupyterhub_config.py"
PROXY = ROOT / "node_modules" / ".bin" / "configurable-http-proxy"
STUDENTS = int(os.environ.get("SEQLAB_HUB_STUDENTS", "8"))
DEADLINE = 900  # 整个班最多等这么多秒
CELL_SECONDS = 300
REPORT = ROOT / "_build" / "hub"
PASSWORD = "seqlab-test"


def _free_port_block(count: int = 3) -> int:
    """找连续 ``count`` 个空闲端口的起点（hub、hub 的内部 API、代理的 API）。"""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + count >= 65535:
            continue
        try:
            for port in range(base, base + count):
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    raise RuntimeError("找不到空闲端口")


@pytest.fixture(scope="module")
def book_repo(tmp_path_factory):
    """学生版（make student 的 notebooks/）做成的本地 git 仓库。"""
    base = tmp_path_factory.mktemp("repo")
    student.build(base / "edition")
    repo = base / "seqlab-student"
    (base / "edition" / "notebooks").rename(repo)
    git = ["git", "-c", "user.name=seqlab", "-c", "user.email=seqlab@localhost", "-C", str(repo)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "学生版"], check=True)
    return f"file://{repo}"


class Hub:
    def __init__(self, state: Path):
        if not PROXY.exists():
            pytest.skip("没有 node_modules/.bin/configurable-http-proxy：请先运行 npm ci")
        self.port = _free_port_block()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_hex(16)
        env = dict(
            os.environ,
            SEQLAB_HUB_PORT=str(self.port),
            SEQLAB_HUB_STATE=str(state),
            SEQLAB_HUB_PASSWORD=PASSWORD,
            SEQLAB_HUB_TOKEN=self.token,
        )
        self.log = open(state.parent / "jupyterhub.log", "wb")
        hub = Path(sys.executable).parent / "jupyterhub"
        self.proc = subprocess.Popen(
            [str(hub), "-f", str(CONFIG)],
            cwd=state.parent,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.api = requests.Session()
        self.api.headers["Authorization"] = f"token {self.token}"
        self._wait_until_up()

    def _wait_until_up(self, seconds: float = 120) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterHub 退出了，见 {self.log.name}")
            try:
                if self.api.get(f"{self.url}/hub/api/", timeout=5).status_code == 200:
                    return
            except requests.ConnectionError:
                pass
            time.sleep(0.5)
        raise TimeoutError("JupyterHub 没有在 120 秒内启动")

    def user(self, name: str) -> dict:
        r = self.api.get(f"{self.url}/hub/api/users/{name}", timeout=30)
        r.raise_for_status()
        return r.json()

    def wait_ready(self, name: str, seconds: float = 180) -> dict:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            server = self.user(name).get("servers", {}).get("")
            if server and server.get("ready"):
                return server
            time.sleep(0.3)
        raise TimeoutError(f"{name} 的服务器没有在 {seconds} 秒内启动")

    def user_token(self, name: str) -> str:
        r = self.api.post(f"{self.url}/hub/api/users/{name}/tokens", json={"note": "class test"}, timeout=30)
        r.raise_for_status()
        return r.json()["token"]

    def stop(self) -> None:
        server_pids = []
        try:
            users = self.api.get(f"{self.url}/hub/api/users", timeout=10).json()
            for u in users:
                server = u.get("servers", {}).get("")
                if server:
                    server_pids.append(self.user(u["name"])["servers"][""].get("state", {}).get("pid"))
                    self.api.delete(f"{self.url}/hub/api/users/{u['name']}/server", timeout=60)
        finally:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            for pid in filter(None, server_pids):  # 万一有服务器没有跟着停
                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            self.log.close()


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    state = tmp_path_factory.mktemp("hub") / "state"
    h = Hub(state)
    yield h
    h.stop()
    assert h.proc.poll() is not None


def login(h: Hub, name: str) -> requests.Session:
    """像浏览器一样在登录页提交表单；返回带着 hub cookie 的会话。"""
    s = requests.Session()
    s.get(f"{h.url}/hub/login", timeout=30).raise_for_status()
    r = s.post(
        f"{h.url}/hub/login?next=",
        data={"username": name, "password": PASSWORD, "_xsrf": s.cookies.get("_xsrf", "")},
        timeout=120,
    )
    r.raise_for_status()
    return s


def pull(session: requests.Session, url: str) -> list[dict]:
    """读 nbgitpuller 的事件流（网页上的 JavaScript 读的也是它），直到完成或出错。"""
    events = []
    with session.get(url, stream=True, timeout=180) as r:
        r.raise_for_status()
        for line in r.iter_lines(decode_unicode=True):
            if line and line.startswith("data:"):
                event = json.loads(line[5:])
                events.append(event)
                if event.get("phase") in ("finished", "error"):
                    break
    return events


def _peak_bytes(pid: int) -> int:
    """进程一生中驻留内存的峰值（VmHWM）。"""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/{pid}/status 里没有 VmHWM")


def _kernel_pid(server_pid: int, kernel_id: str) -> int:
    for child in psutil.Process(server_pid).children(recursive=True):
        if any(kernel_id in part for part in child.cmdline()):
            return child.pid
    raise RuntimeError(f"找不到内核 {kernel_id} 的进程")


def _decode(frame: str | bytes) -> dict:
    """websocket 上的一条内核消息。带二进制缓冲区的消息（例如控件的 comm 消息）是二进制帧：
    4 字节的段数 n、n 个 4 字节的偏移，第一段是消息的 JSON，后面是缓冲区。"""
    if isinstance(frame, str):
        return json.loads(frame)
    n = int.from_bytes(frame[:4], "big")
    offsets = [int.from_bytes(frame[4 + 4 * i : 8 + 4 * i], "big") for i in range(n)]
    return json.loads(frame[offsets[0] : offsets[1] if n > 1 else len(frame)])


class KernelChannel:
    """Jupyter 内核消息协议的最小客户端（经服务器的 websocket）。"""

    def __init__(self, url: str, token: str):
        self.session = uuid.uuid4().hex
        self.ws = websocket.create_connection(
            f"{url}/channels?session_id={self.session}",
            header=[f"Authorization: token {token}"],
            timeout=CELL_SECONDS,
        )

    def execute(self, code: str) -> dict:
        msg_id = uuid.uuid4().hex
        header = {
            "msg_id": msg_id,
            "msg_type": "execute_request",
            "session": self.session,
            "username": "student",
            "version": "5.3",
            "date": "",
        }
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        self.ws.send(
            json.dumps(
                {
                    "header": header,
                    "parent_header": {},
                    "metadata": {},
                    "content": content,
                    "channel": "shell",
                    "buffers": [],
                }
            )
        )
        reply, idle = None, False
        while reply is None or not idle:
            msg = _decode(self.ws.recv())
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "execute_reply":
                reply = msg["content"]
            elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                idle = True
        return reply

    def close(self) -> None:
        self.ws.close()


def attend(h: Hub, repo: str, name: str, notebook: str) -> dict:
    """一个学生上一节课：登录、拉取、执行整个笔记本。返回测量值。"""
    t_login = time.monotonic()
    login(h, name)
    h.wait_ready(name)
    token = h.user_token(name)
    auth = requests.Session()
    auth.headers["Authorization"] = f"token {token}"
    base = f"{h.url}/user/{name}"
    query = urlencode({"repo": repo, "branch": "main", "targetpath": "seqlab-student"})
    events = pull(auth, f"{base}/git-pull/api?{query}")
    path = f"seqlab-student/{notebook}"
    r = auth.get(f"{base}/api/contents/{path}", params={"content": "1"}, timeout=60)
    r.raise_for_status()
    nb = nbformat.from_dict(r.json()["content"])
    r = auth.post(
        f"{base}/api/sessions",
        json={"path": path, "type": "notebook", "kernel": {"name": "python3"}},
        timeout=120,
    )
    r.raise_for_status()
    kernel_id = r.json()["kernel"]["id"]
    session_id = r.json()["id"]
    server_pid = h.user(name)["servers"][""]["state"]["pid"]
    channel = KernelChannel(f"ws://127.0.0.1:{h.port}/user/{name}/api/kernels/{kernel_id}", token)
    statuses, t_first = [], None
    t_start = time.monotonic()
    try:
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            reply = channel.execute(cell.source)
            statuses.append(reply.get("status") if reply.get("status") == "ok" else f"{reply.get('ename')}")
            if t_first is None:
                t_first = time.monotonic()
            if reply.get("status") != "ok":
                break
    finally:
        channel.close()
    t_end = time.monotonic()
    kernel = psutil.Process(_kernel_pid(server_pid, kernel_id))
    cpu = kernel.cpu_times()
    result = {
        "student": name,
        "notebook": notebook,
        "section": next(questions.section_of(p) for p in student.notebooks() if p.name == notebook),
        "pulled": events[-1].get("phase") if events else None,
        "code_cells": sum(c.cell_type == "code" for c in nb.cells),
        "statuses": statuses,
        "login_to_first_cell_s": t_first - t_login,
        "notebook_s": t_end - t_start,
        "kernel_cpu_s": cpu.user + cpu.system,
        "kernel_peak_bytes": _peak_bytes(kernel.pid),
        "server_peak_bytes": _peak_bytes(server_pid),
    }
    auth.delete(f"{base}/api/sessions/{session_id}", timeout=60)
    return result


STARTUP = """\
import resource, sys, time
t0 = time.process_time()
if sys.argv[1] == "before":
    import rfc3987_syntax  # 已经导入过它，jsonschema 就照常构建 IRI 文法：与 setup() 不跳过时一样
import seqlab
seqlab.setup()
print(time.process_time() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "rfc3987_syntax" in sys.modules)
"""


def kernel_startup(runs: int = 3) -> dict:
    """内核启动（``import seqlab; seqlab.setup()``）的 CPU 秒数与内存峰值：跳过 IRI 文法与不跳过，交替测量取中位数。"""
    samples = {"before": [], "after": []}
    for _ in range(runs):
        for variant in samples:
            out = subprocess.run(
                [sys.executable, "-c", STARTUP, variant],
                capture_output=True,
                text=True,
                check=True,
                timeout=300,
            ).stdout.split()
            samples[variant].append((float(out[0]), int(out[1]), out[2] == "True"))
    return {
        variant: {
            "cpu_s": statistics.median(s[0] for s in got),
            "peak_bytes": statistics.median(s[1] for s in got),
            "grammar_loaded": all(s[2] for s in got),
        }
        for variant, got in samples.items()
    }


@pytest.fixture(scope="module")
def startup():
    return kernel_startup()


@pytest.mark.hub
@pytest.mark.slow
def test_kernel_startup_skips_the_iri_grammar(startup):
    assert startup["before"]["grammar_loaded"] and not startup["after"]["grammar_loaded"]
    assert startup["after"]["peak_bytes"] < startup["before"]["peak_bytes"]


@pytest.fixture(scope="module")
def lesson(hub, book_repo, startup):
    names = [p.name for p in student.notebooks()]
    seats = [(f"student{k + 1:02d}", names[k % len(names)]) for k in range(STUDENTS)]
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=STUDENTS) as pool:
        futures = [pool.submit(attend, hub, book_repo, name, nb) for name, nb in seats]
        results = [f.result(timeout=max(1, DEADLINE - (time.monotonic() - start))) for f in futures]
    report = {
        "wall_s": time.monotonic() - start,
        "cores": os.cpu_count(),
        "memory_bytes": psutil.virtual_memory().total,
        "students": results,
        "kernel_startup": startup,
    }
    REPORT.mkdir(parents=True, exist_ok=True)
    (REPORT / "sizing.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    (REPORT / "sizing.md").write_text(sizing.markdown(report), encoding="utf-8")
    return results


@pytest.mark.hub
@pytest.mark.slow
def test_every_student_ran_a_whole_notebook(lesson):
    assert len(lesson) == STUDENTS >= 8
    for r in lesson:
        assert r["pulled"] == "finished", r
        assert len(r["statuses"]) == r["code_cells"] > 0, r
        assert set(r["statuses"]) == {"ok"}, r
        assert r["kernel_peak_bytes"] > 50 * 2**20 and r["server_peak_bytes"] > 20 * 2**20


@pytest.mark.hub
@pytest.mark.slow
def test_every_section_was_taught(lesson):
    assert {r["notebook"] for r in lesson} == {p.name for p in student.notebooks()}


@pytest.mark.hub
@pytest.mark.slow
def test_generated_link_pulls_the_book(hub, book_repo, lesson):
    """links.py 给出的链接：用浏览器的方式点开它（登录、启动服务器、打开 nbgitpuller 的页面），再读页面读的事件流。"""
    first = student.notebooks()[0].name
    url = links.link(hub.url, book_repo, "main", first)
    assert urlparse(url).hostname == "127.0.0.1"
    s = login(hub, "teacher")
    hub.wait_ready("teacher")
    page = s.get(url, timeout=120)
    page.raise_for_status()
    assert "/user/teacher/git-pull" in page.url
    events = pull(s, page.url.replace("/git-pull?", "/git-pull/api?", 1))
    assert events and events[-1]["phase"] == "finished", events
    folder = links.folder_of(book_repo)
    r = s.get(f"{hub.url}/user/teacher/api/contents/{folder}", timeout=30)
    r.raise_for_status()
    pulled = {item["name"] for item in r.json()["content"]}
    assert {p.name for p in student.notebooks()} <= pulled


def test_links_command_refuses_a_bad_hub_address(capsys):
    assert links.main(["hub.example.edu", "https://git.example.edu/course/seqlab-student"]) == 2
    assert "https://" in capsys.readouterr().out


def test_link_carries_repo_branch_and_the_notebook_inside_the_pulled_folder():
    from urllib.parse import parse_qs

    url = links.link(
        "https://hub.example.edu/", "https://git.example.edu/course/seqlab-student", "main", "01_x.ipynb"
    )
    parsed = urlparse(url)
    assert (parsed.scheme, parsed.netloc, parsed.path) == (
        "https",
        "hub.example.edu",
        "/hub/user-redirect/git-pull",
    )
    assert parse_qs(parsed.query) == {
        "repo": ["https://git.example.edu/course/seqlab-student"],
        "branch": ["main"],
        "urlpath": ["lab/tree/seqlab-student/01_x.ipynb"],
    }


def test_kubernetes_resources_from_measurements():
    """0.6 GB 的峰值：保证 1.25 × 0.6 = 0.75 GB，上限 2 × 0.6 = 1.2 → 1.25 GB；CPU 30 秒 ÷ 120 秒 = 0.25 核。"""
    students = [
        {"kernel_peak_bytes": 0.4e9, "server_peak_bytes": 0.2e9, "kernel_cpu_s": 30.0},
        {"kernel_peak_bytes": 0.3e9, "server_peak_bytes": 0.2e9, "kernel_cpu_s": 12.0},
    ]
    assert sizing.kubernetes(students) == {
        "memory_guarantee_gb": 0.75,
        "memory_limit_gb": 1.25,
        "cpu_guarantee": 0.25,
        "cpu_limit": 1,
    }
