"""A minimal W3C WebDriver client for the report's browser tests: chromedriver (Debian package
chromium-driver) driven over its HTTP protocol with the standard library, so that the tests click
through the real report in headless Chromium without a Python browser package."""

import base64
import json
import socket
import subprocess
import time
import urllib.error
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C key of an element reference
ENTER = "\ue007"
SHIFT = "\ue008"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebDriverError(RuntimeError):
    pass


class Browser:
    """One chromedriver process and one headless Chromium session."""

    def __init__(self, chromedriver, chromium, args, timeout=60):
        self.port = free_port()
        self.process = subprocess.Popen(
            [chromedriver, f"--port={self.port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self._call("GET", "/status")["ready"]:
                    break
            except (urllib.error.URLError, ConnectionError):
                pass
            if time.monotonic() > deadline:
                self.process.kill()
                raise WebDriverError("chromedriver did not start")
            time.sleep(0.1)
        caps = {"browserName": "chrome", "goog:chromeOptions": {"binary": chromium, "args": args}}
        self.session = self._call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})["sessionId"]

    def _call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.base + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return json.loads(response.read())["value"]
        except urllib.error.HTTPError as err:
            raise WebDriverError(err.read().decode(errors="replace")[:2000]) from None

    def cmd(self, method, path, body=None):
        return self._call(method, f"/session/{self.session}{path}", body)

    def get(self, url):
        self.cmd("POST", "/url", {"url": url})

    @property
    def url(self):
        return self.cmd("GET", "/url")

    def find(self, css):
        return self.cmd("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]

    def click(self, element):
        self.cmd("POST", f"/element/{element}/click", {})

    def type(self, element, text):
        self.cmd("POST", f"/element/{element}/value", {"text": text})

    def js(self, script, *args):
        """Run script (a function body; `arguments` holds args: pass elements through element())."""
        return self.cmd("POST", "/execute/sync", {"script": script, "args": args})

    @staticmethod
    def element(element):
        return {ELEMENT: element}

    def screenshot(self, path):
        path.write_bytes(base64.b64decode(self.cmd("GET", "/screenshot")))
        return path

    def close(self):
        try:
            self.cmd("DELETE", "")
        finally:
            self.process.terminate()
            self.process.wait(timeout=30)
