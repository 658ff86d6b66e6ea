"""本书在一台机器上的 JupyterHub 配置：教师可以从这个文件开始。

    .venv/bin/jupyterhub -f hub/jupyterhub_config.py

它就是 ``make test-hub`` 测试用的配置（那里用环境变量换成临时的端口、文件夹和口令）：

* 代理：npm 上的 configurable-http-proxy（``npm ci`` 装到 ``node_modules/``）；
* 登录：``DummyAuthenticator``——任何用户名加上同一个口令都能登录，**只适合测试**。真正上课请换成学校的
  登录方式（LDAP、OAuth 等，见 JupyterHub 文档的 Authenticators 一节）；
* 每个学生一个 ``jupyterhub-singleuser`` 进程，``SimpleLocalProcessSpawner``：都以启动 hub 的账户运行，
  家目录在 ``state/home/<用户名>/``。人多时换成 Zero to JupyterHub（Kubernetes，每人一个容器，见教师指南）；
* 本书的笔记本用 nbgitpuller 链接发给学生（``make links HUB=…``）。

环境变量（都可以不设）：``SEQLAB_HUB_PORT``（默认 8000）、``SEQLAB_HUB_STATE``（数据库、cookie 密钥、
学生家目录所在的文件夹，默认 ``hub/state``）、``SEQLAB_HUB_PASSWORD``（DummyAuthenticator 的口令）、
``SEQLAB_HUB_TOKEN``（给测试用的管理服务令牌；不设就没有这个服务）。
"""

import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821 —— JupyterHub 载入配置文件时提供

ROOT = Path(__file__).resolve().parent.parent
STATE = Path(os.environ.get("SEQLAB_HUB_STATE", ROOT / "hub" / "state"))
PORT = int(os.environ.get("SEQLAB_HUB_PORT", "8000"))
STATE.mkdir(parents=True, exist_ok=True)

# 只在本机的回环地址上监听：hub、代理和它的 API 都是。对外开放时放在 HTTPS 反向代理后面。
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = PORT
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = PORT + 1
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{PORT + 2}"
c.ConfigurableHTTPProxy.command = [str(ROOT / "node_modules" / ".bin" / "configurable-http-proxy")]
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")

c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = os.environ.get("SEQLAB_HUB_PASSWORD", "seqlab")
c.Authenticator.allow_all = True

c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(STATE / "home" / "{username}")
c.Spawner.cmd = [str(Path(sys.executable).parent / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
# 学生的笔记本里，没做完的练习只显示 ❌，不打断“全部运行”。
c.Spawner.environment = {"SEQLAB_STRICT_CHECKS": "0", "MALLOC_ARENA_MAX": "2"}
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# 上课开始时全班同时登录：别让 hub 一次启动太多服务器把机器压垮。
c.JupyterHub.concurrent_spawn_limit = 20
# 下课后没人用的服务器一小时后自动关闭（jupyter_server 自带的空闲关闭）；以 root 启动 hub 时要 --allow-root。
c.Spawner.args = ["--ServerApp.shutdown_no_activity_timeout=3600"] + (
    ["--allow-root"] if os.getuid() == 0 else []
)

if os.environ.get("SEQLAB_HUB_TOKEN"):
    c.JupyterHub.services = [{"name": "classroom-test", "api_token": os.environ["SEQLAB_HUB_TOKEN"]}]
    c.JupyterHub.load_roles = [
        {
            "name": "classroom-test",
            "scopes": ["admin:users", "admin:servers", "tokens", "admin:server_state", "access:servers"],
            "services": ["classroom-test"],
        }
    ]
