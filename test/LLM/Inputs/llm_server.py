#!/usr/bin/env python3
"""A scripted chat-completions server on 127.0.0.1 for the lift tests.

    llm_server.py --responses JSON [--base DIR] [--bind ADDRESS] --log LOG \
        -- COMMAND ARGS...

binds a free port of ADDRESS (default 127.0.0.1, always a loopback address),
runs COMMAND with every "{url}" in its arguments replaced by
http://ADDRESS:<port> (and "{port}" by the port), answers the command's
requests from the script in order, writes each request to LOG (with its size
in bytes), and exits with the command's exit status.

It also serves as a fake proxy (http_proxy={url}): a proxied request's path
is the whole URL, which the log shows; a CONNECT (an https tunnel) is logged
with its headers and refused with 403, so nothing leaves the machine.

The responses are a JSON list [STEP, ...]; a STEP is an object with
  "openai": TEXT        a chat-completions answer whose content is TEXT
  "anthropic": TEXT     a messages-API answer whose text is TEXT
  "finish_reason"/"stop_reason": the reason sent with it (default: stop,
                        end_turn)
  "body": TEXT          a raw body instead (e.g. not JSON)
  "status": N           the HTTP status (default 200)
  "headers": {...}      extra response headers (e.g. Retry-After)
  "delay": SECONDS      wait before answering (to provoke a timeout)
  "drop": true          close the connection without any answer
TEXT starting with "@" names a file relative to --base (default: the
directory of this script).
Requests beyond the script get HTTP 418, which the client does not retry.
"""

import argparse
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time


def load_text(value, base):
    if isinstance(value, str) and value.startswith("@"):
        with open(os.path.join(base, value[1:]), encoding="utf-8") as f:
            return f.read()
    return value


LOGGED_HEADERS = ("authorization", "proxy-authorization", "x-api-key",
                  "anthropic-version", "content-type")


def log_request(log, number, path, headers, body):
    """Writes a request in a form that FileCheck can match line by line."""
    log.write(f"=== request {number}: POST {path} "
              f"({len(body.encode('utf-8'))} bytes)\n")
    for name in LOGGED_HEADERS:
        if name in headers:
            log.write(f"{name}: {headers[name]}\n")
    try:
        data = json.loads(body)
    except ValueError:
        log.write("--- body is not JSON\n")
        return
    for key in sorted(data):
        if key not in ("messages", "system"):
            log.write(f"--- field {key}: {json.dumps(data[key])}\n")
    if "system" in data:
        log.write("--- system:\n" + data["system"] + "\n")
    for i, message in enumerate(data.get("messages", []), 1):
        log.write(f"--- message {i} ({message['role']}):\n")
        log.write(message["content"] + "\n")
    log.write("=== end of request\n")
    log.flush()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--responses", required=True)
    parser.add_argument("--base", default=os.path.dirname(
        os.path.abspath(__file__)))
    parser.add_argument("--log", required=True)
    parser.add_argument("--bind", default="127.0.0.1")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    base = args.base
    steps = json.loads(args.responses)
    log = open(args.log, "w", encoding="utf-8")
    lock = threading.Lock()
    served = [0]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *unused):
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length).decode("utf-8", "replace")
            headers = {k.lower(): v for k, v in self.headers.items()}
            with lock:
                index = served[0]
                served[0] += 1
                log_request(log, index + 1, self.path, headers, body)
            step = steps[index] if index < len(steps) else None
            self.answer(step)

        def do_CONNECT(self):
            headers = {k.lower(): v for k, v in self.headers.items()}
            with lock:
                served[0] += 1
                log.write(f"=== request {served[0]}: CONNECT {self.path}\n")
                for name in LOGGED_HEADERS:
                    if name in headers:
                        log.write(f"{name}: {headers[name]}\n")
                log.write("=== end of request\n")
                log.flush()
            self.close_connection = True
            self.send(403, "text/plain", "no tunnels here")

        def answer(self, step):
            if step is None:
                return self.send(418, "application/json", json.dumps(
                    {"error": {"message": "no more scripted responses"}}))
            if step.get("delay"):
                time.sleep(step["delay"])
            if step.get("drop"):
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            if "openai" in step:
                payload = {
                    "id": "chatcmpl-test", "object": "chat.completion",
                    "choices": [{
                        "index": 0,
                        "message": {"role": "assistant",
                                    "content": load_text(step["openai"], base)},
                        "finish_reason": step.get("finish_reason", "stop")}]}
                text = json.dumps(payload)
            elif "anthropic" in step:
                payload = {
                    "id": "msg_test", "type": "message", "role": "assistant",
                    "content": [{"type": "text",
                                 "text": load_text(step["anthropic"], base)}],
                    "stop_reason": step.get("stop_reason", "end_turn")}
                text = json.dumps(payload)
            else:
                text = load_text(step.get("body", ""), base)
            self.send(step.get("status", 200), "application/json", text,
                      step.get("headers", {}))

        def send(self, status, content_type, text, extra=None):
            data = text.encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (extra or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # The client gave up (a timeout test).

    if not args.bind.startswith("127."):
        sys.exit("llm_server: --bind takes a loopback address")
    server = http.server.ThreadingHTTPServer((args.bind, 0), Handler)
    server.daemon_threads = True
    server.block_on_close = False
    url = f"http://{args.bind}:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = str(server.server_address[1])
        result = subprocess.run([arg.replace("{url}", url)
                                 .replace("{port}", port) for arg in command])
    finally:
        server.shutdown()
        server.server_close()
    print(f"llm_server: served {served[0]} request(s)", file=sys.stderr)
    log.close()
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
