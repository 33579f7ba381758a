"""Decima's bridge to a Jupyter kernel in the sandbox container.

Started by the sandbox as a long-lived process (`python3 -c <this file> NAME`), it finds the
conversation NAME's kernel (or starts one, an ipykernel process in a session of its own that
outlives the bridge), connects with jupyter_client through the kernel's connection file, and
speaks the kernel's own messaging protocol to it. To Decima it speaks JSON lines:
one request per line on stdin, one reply per line on stdout.

Requests:
  {"op": "execute", "id": N, "code": "...", "timeout": S, "charts": "dir/prefix"}
  {"op": "variables", "id": N}
  {"op": "restart", "id": N}
  {"op": "interrupt"}                      (no reply: the running execute replies)

Every reply carries the request's id. The first line is {"event": "ready", ...} once the
kernel answers, or {"event": "failed", "error": "..."} when it cannot start.
"""

import ast
import base64
import json
import os
import queue
import re
import signal
import sys
import threading
import time

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# What one call's stdout or stderr keeps; the rest is cut with a note.
MAX_STREAM = 1024 * 1024
# How long an interrupted kernel gets to become idle before it is restarted.
INTERRUPT_GRACE = 5.0
WORKSPACE = os.environ.get("DECIMA_WORKSPACE", "/workspace")
# Jupyter's and IPython's own files go here, never into the workspace (HOME is the workspace).
STATE = os.environ.get("DECIMA_KERNEL_DIR", "/tmp/decima-kernel")
for var, sub in (("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_DATA_DIR", "data"),
                 ("JUPYTER_CONFIG_DIR", "config"), ("IPYTHONDIR", "ipython"),
                 ("MPLCONFIGDIR", "matplotlib")):
    os.environ[var] = os.path.join(STATE, sub)
    os.makedirs(os.environ[var], mode=0o700, exist_ok=True)

VARIABLES = (
    "(lambda ip, types: __import__('json').dumps(["
    "{'name': n, 'type': (type(v).__module__.split('.')[0] + '.' if type(v).__module__ != 'builtins' else '') + type(v).__qualname__,"
    " 'shape': (list(v.shape) if isinstance(getattr(v, 'shape', None), tuple)"
    " else (len(v) if isinstance(v, (list, tuple, dict, set, frozenset, str, bytes)) else None))}"
    " for n, v in list(ip.user_ns.items())"
    " if not n.startswith('_') and n not in ip.user_ns_hidden"
    " and not isinstance(v, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type))"
    "][:60]))(get_ipython(), __import__('types'))"
)

out_lock = threading.Lock()


def emit(message):
    with out_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


class Stream:
    """A capped text buffer: the start of an output, and how much was cut."""

    def __init__(self):
        self.parts = []
        self.size = 0
        self.cut = 0

    def add(self, text):
        room = MAX_STREAM - self.size
        if room <= 0:
            self.cut += len(text)
            return
        kept = text[:room]
        self.parts.append(kept)
        self.size += len(kept)
        self.cut += len(text) - len(kept)

    def text(self):
        s = "".join(self.parts)
        if self.cut:
            s += "\n[... %d more characters not kept]" % self.cut
        return s


def alive(pid):
    """Whether process `pid` runs (a zombie, left for a PID 1 that does not reap, does not)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError, ValueError):
        return False


class Kernel:
    """The conversation's kernel: a process of its own session, which outlives this bridge, so
    that the next run of the conversation finds its variables. Its connection file and pid
    are in the conversation's folder under STATE."""

    def __init__(self, name):
        self.dir = os.path.join(STATE, name)
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        self.conn = os.path.join(self.dir, "kernel.json")
        self.pidfile = os.path.join(self.dir, "kernel.pid")
        self.pid = None
        self.client = None
        self.attached = False

    def open(self):
        """Connects to the kernel already running, or starts one."""
        pid = self.read_pid()
        if pid and alive(pid) and os.path.exists(self.conn):
            try:
                self.pid = pid
                self.connect(timeout=15)
                self.attached = True
                return
            except Exception:
                self.kill()
        self.start()

    def read_pid(self):
        try:
            with open(self.pidfile) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return None

    def start(self):
        import subprocess

        self.attached = False
        for path in (self.conn, self.pidfile):
            if os.path.exists(path):
                os.remove(path)
        env = dict(os.environ)
        # Charts come back as display data, drawn by the inline backend.
        env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
        # The same hashes in every kernel, so that a replay orders a set as the run did.
        env["PYTHONHASHSEED"] = "0"
        env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
        log = open(os.path.join(self.dir, "kernel.log"), "ab")
        process = subprocess.Popen(
            [sys.executable, "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f", self.conn],
            cwd=WORKSPACE, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True,
        )
        log.close()
        self.pid = process.pid
        with open(self.pidfile, "w") as f:
            f.write(str(self.pid))
        deadline = time.monotonic() + 60
        while not os.path.exists(self.conn):
            if process.poll() is not None:
                raise RuntimeError("the kernel exited at its start (%s)" % self.log_tail())
            if time.monotonic() > deadline:
                raise RuntimeError("the kernel wrote no connection file within 60 s")
            time.sleep(0.02)
        self.connect(timeout=60)

    def connect(self, timeout):
        from jupyter_client import BlockingKernelClient

        if self.client is not None:
            try:
                self.client.stop_channels()
            except Exception:
                pass
        deadline = time.monotonic() + 5
        while True:
            try:
                client = BlockingKernelClient(connection_file=self.conn)
                client.load_connection_file()
                break
            except (ValueError, OSError):
                # Written but not yet whole.
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
        client.start_channels()
        client.wait_for_ready(timeout=timeout)
        self.client = client

    def log_tail(self):
        try:
            with open(os.path.join(self.dir, "kernel.log"), errors="replace") as f:
                return f.read()[-400:].strip()
        except OSError:
            return "no log"

    def is_alive(self):
        return self.pid is not None and alive(self.pid)

    def interrupt(self):
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGINT)
            except OSError:
                pass

    def kill(self):
        if self.pid:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                pass
            # Reaped here when this bridge started it; otherwise PID 1's.
            try:
                os.waitpid(self.pid, os.WNOHANG)
            except OSError:
                pass
        self.pid = None

    def restart(self):
        self.kill()
        self.start()


def save_chart(charts, n, mime, data):
    ext = {"image/png": "png", "image/svg+xml": "svg"}[mime]
    rel = "%s-%d.%s" % (charts, n, ext)
    path = os.path.join(WORKSPACE, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if mime == "image/png":
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(data if isinstance(data, str) else "".join(data))
    return rel


class Bridge:
    def __init__(self, name):
        self.kernel = Kernel(name)
        self.kernel.open()
        self.interrupted = False

    @property
    def kc(self):
        return self.kernel.client

    def restart(self):
        self.kernel.restart()

    def interrupt(self):
        self.interrupted = True
        self.kernel.interrupt()

    def execute(self, req):
        code = req.get("code", "")
        timeout = float(req.get("timeout", 60))
        charts = req.get("charts", "charts/python")
        self.interrupted = False
        started = time.monotonic()
        msg_id = self.kc.execute(code, store_history=True, allow_stdin=False)
        stdout, stderr = Stream(), Stream()
        result = None
        html = []
        saved = []
        error = None
        status = "ok"
        restarted = False
        deadline = started + timeout
        interrupted_at = None
        while True:
            now = time.monotonic()
            if self.interrupted and interrupted_at is None:
                status = "interrupted"
                interrupted_at = now
            if interrupted_at is None and now >= deadline:
                status = "timeout"
                self.interrupt()
                interrupted_at = now
            if interrupted_at is not None and now - interrupted_at > INTERRUPT_GRACE:
                self.restart()
                restarted = True
                break
            if not self.kernel.is_alive():
                status = "died"
                self.restart()
                restarted = True
                break
            try:
                msg = self.kc.get_iopub_msg(timeout=0.2)
            except queue.Empty:
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            content = msg["content"]
            if kind == "stream":
                (stdout if content.get("name") == "stdout" else stderr).add(content.get("text", ""))
            elif kind in ("execute_result", "display_data"):
                data = content.get("data", {})
                image = next((m for m in ("image/png", "image/svg+xml") if m in data), None)
                if image:
                    saved.append(save_chart(charts, len(saved) + 1, image, data[image]))
                if "text/html" in data:
                    html.append(data["text/html"])
                if kind == "execute_result" and "text/plain" in data:
                    result = data["text/plain"]
            elif kind == "error":
                error = {
                    "ename": content.get("ename", ""),
                    "evalue": content.get("evalue", ""),
                    "traceback": [ANSI.sub("", line) for line in content.get("traceback", [])],
                }
                if status == "ok":
                    status = "error"
            elif kind == "status" and content.get("execution_state") == "idle":
                break
        return {
            "id": req.get("id"),
            "status": status,
            "stdout": stdout.text(),
            "stderr": stderr.text(),
            "result": result,
            "html": html,
            "charts": saved,
            "error": error,
            "restarted": restarted,
            "elapsed_ms": int((time.monotonic() - started) * 1000),
        }

    def variables(self, req):
        msg_id = self.kc.execute("", silent=True, user_expressions={"v": VARIABLES})
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                reply = self.kc.get_shell_msg(timeout=0.5)
            except queue.Empty:
                continue
            if reply.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            found = reply["content"].get("user_expressions", {}).get("v", {})
            if found.get("status") != "ok":
                return {"id": req.get("id"), "variables": [], "error": found.get("evalue", "")}
            text = found.get("data", {}).get("text/plain", "'[]'")
            return {"id": req.get("id"), "variables": json.loads(ast.literal_eval(text))}
        return {"id": req.get("id"), "variables": [], "error": "the kernel did not answer"}


def main():
    try:
        bridge = Bridge(sys.argv[1] if len(sys.argv) > 1 else "default")
    except Exception as e:  # the kernel could not start: say why, once
        emit({"event": "failed", "error": "%s: %s" % (type(e).__name__, e)})
        return 1
    emit({"event": "ready", "attached": bridge.kernel.attached})
    requests = queue.Queue()

    def read():
        for line in sys.stdin:
            try:
                req = json.loads(line)
            except ValueError:
                continue
            if req.get("op") == "interrupt":
                bridge.interrupt()
            else:
                requests.put(req)
        requests.put(None)

    threading.Thread(target=read, daemon=True).start()
    while True:
        req = requests.get()
        if req is None:
            break
        op = req.get("op")
        try:
            if op == "execute":
                emit(bridge.execute(req))
            elif op == "variables":
                emit(bridge.variables(req))
            elif op == "restart":
                bridge.restart()
                emit({"id": req.get("id"), "restarted": True})
            else:
                emit({"id": req.get("id"), "status": "refused", "error": {"ename": "BridgeError", "evalue": "unknown op %r" % op, "traceback": []}})
        except Exception as e:
            emit({"id": req.get("id"), "status": "bridge", "error": {"ename": type(e).__name__, "evalue": str(e), "traceback": []}})
    # The kernel stays for the conversation's next run; only this bridge's channels close.
    try:
        bridge.kc.stop_channels()
    except Exception:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
