#!/usr/bin/env python3
"""A real llama.cpp server (through the xllamacpp bindings) for Decima's tests.

    python serve.py MODEL PORT N_CTX [--parallel N] [--no-slots]

Serves MODEL on 127.0.0.1:PORT with a context of N_CTX tokens, split over N slots (llama.cpp
gives each slot N_CTX / N), and prints "ready" once it answers. --no-slots turns the /slots
endpoint off, as `llama-server --no-slots` does. The server stops on SIGTERM or SIGINT, and on
its own when the process that started it goes away, so a test that dies cannot leave it behind.
"""

import argparse
import os
import signal
import sys
import threading
import time


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="path of a GGUF model")
    parser.add_argument("port", type=int, help="port on 127.0.0.1")
    parser.add_argument("n_ctx", type=int, help="context size in tokens, over all slots")
    parser.add_argument("--parallel", type=int, default=1, help="number of slots")
    parser.add_argument("--no-slots", action="store_true", help="turn GET /slots off")
    args = parser.parse_args()
    if not os.path.isfile(args.model):
        parser.error(f"no model file at {args.model}")
    if args.n_ctx <= 0 or args.parallel <= 0:
        parser.error("n_ctx and --parallel must be positive")
    return args


def watch_parent(parent):
    """Exits when the process that started this one is gone (this one is then re-parented)."""
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(1)


def main():
    args = parse_args()
    parent = os.getppid()
    threading.Thread(target=watch_parent, args=(parent,), daemon=True).start()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: os._exit(0))

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.port = args.port
    params.hostnames = ["127.0.0.1"]
    params.n_ctx = args.n_ctx
    params.n_parallel = args.parallel
    params.endpoint_slots = not args.no_slots
    params.cpuparams.n_threads = min(2, os.cpu_count() or 1)
    params.use_jinja = True
    params.endpoint_metrics = True
    # Kept referenced: the server stops when the object is collected.
    server = xllamacpp.Server(params)
    print("ready", flush=True)
    while server is not None:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
