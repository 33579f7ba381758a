#!/usr/bin/env python3
"""Python tiktoken as the reference for Decima's token counts, fully offline.

tiktoken normally downloads its rank files on first use. This script loads them from a
directory instead (`--ranks-dir`, holding `cl100k_base.tiktoken` and `o200k_base.tiktoken`,
which the Rust tests write from tiktoken-rs's built-in tables). Each file must have the sha256
that OpenAI publishes, which proves both libraries use the same BPE. The files are placed in a
private TIKTOKEN_CACHE_DIR under the names tiktoken looks for, and any attempt to download is
refused.

Modes (input on stdin, one JSON value per line; output on stdout, one JSON object per line):
  texts     each line a JSON string; prints {"cl100k_base": n, "o200k_base": n} per line.
  requests  each line {"messages": [...], "tools": [...]}; prints, per encoding, per-message
            counts, the tool-definition count and the total, by OpenAI's cookbook
            (num_tokens_from_messages and num_tokens_for_tools), with encode_ordinary.
  bench     each line a JSON string; times only the encode loop (best of --rounds) and prints
            one line {"<encoding>": {"bytes", "seconds", "mb_per_s"}}.

Needs: python3 -m pip install --break-system-packages tiktoken==0.14.0
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time

ENCODINGS = {
    # name: (blob URL tiktoken fetches, sha256 OpenAI publishes)
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}

# num_tokens_for_tools constants: gpt-4o family (o200k) and gpt-4 / gpt-3.5 (cl100k).
TOOL_COSTS = {
    "o200k_base": dict(func_init=7, prop_init=3, prop_key=3, enum_init=-3, enum_item=3, func_end=12),
    "cl100k_base": dict(func_init=10, prop_init=3, prop_key=3, enum_init=-3, enum_item=3, func_end=12),
}


def fail(message, code=2):
    print(f"tiktoken_reference.py: {message}", file=sys.stderr)
    sys.exit(code)


def load_encodings(ranks_dir):
    try:
        import tiktoken
        import tiktoken.load
    except ImportError:
        fail("Python package tiktoken is missing: run `python3 -m pip install --break-system-packages tiktoken==0.14.0`", 3)

    cache = tempfile.mkdtemp(prefix="decima-tiktoken-")
    for name, (url, sha256) in ENCODINGS.items():
        source = os.path.join(ranks_dir, f"{name}.tiktoken")
        try:
            with open(source, "rb") as f:
                data = f.read()
        except OSError as e:
            fail(f"cannot read {source}: {e}")
        digest = hashlib.sha256(data).hexdigest()
        if digest != sha256:
            fail(f"{source} has sha256 {digest}, not OpenAI's {sha256}: not the same BPE")
        with open(os.path.join(cache, hashlib.sha1(url.encode()).hexdigest()), "wb") as f:
            f.write(data)
    os.environ["TIKTOKEN_CACHE_DIR"] = cache

    def no_download(blobpath):
        raise RuntimeError(f"tiktoken tried to download {blobpath}; the offline cache did not match")

    tiktoken.load.read_file = no_download
    try:
        return {name: tiktoken.get_encoding(name) for name in ENCODINGS}
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def count(enc, text):
    return len(enc.encode_ordinary(text))


def num_tokens_from_messages(enc, messages):
    """The cookbook's loop over every key of every message, with tool calls as name + arguments."""
    tokens_per_message = 3
    tokens_per_name = 1
    per_message = []
    for message in messages:
        n = tokens_per_message
        for key, value in message.items():
            if key == "tool_calls":
                for call in value:
                    n += count(enc, call["name"]) + count(enc, call["arguments"])
                continue
            n += count(enc, value)
            if key == "name":
                n += tokens_per_name
        per_message.append(n)
    return per_message


def as_text(value):
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def num_tokens_for_tools(enc, name, tools):
    """The cookbook's num_tokens_for_tools, tolerant of schemas without types or descriptions."""
    if not tools:
        return 0
    c = TOOL_COSTS[name]
    total = 0
    for tool in tools:
        function = tool["function"]
        total += c["func_init"]
        desc = function.get("description", "")
        if desc.endswith("."):
            desc = desc[:-1]
        total += count(enc, function["name"] + ":" + desc)
        properties = function.get("parameters", {}).get("properties")
        if not isinstance(properties, dict) or not properties:
            continue
        total += c["prop_init"]
        for key, prop in properties.items():
            prop = prop if isinstance(prop, dict) else {}
            total += c["prop_key"]
            p_type = as_text(prop.get("type", ""))
            if isinstance(prop.get("enum"), list):
                total += c["enum_init"]
                for item in prop["enum"]:
                    total += c["enum_item"]
                    total += count(enc, as_text(item))
            p_desc = prop.get("description", "")
            p_desc = p_desc if isinstance(p_desc, str) else ""
            if p_desc.endswith("."):
                p_desc = p_desc[:-1]
            total += count(enc, f"{key}:{p_type}:{p_desc}")
    total += c["func_end"]
    return max(total, 0)


def read_lines():
    return [json.loads(line) for line in sys.stdin if line.strip()]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks-dir", required=True, help="directory with <encoding>.tiktoken files")
    parser.add_argument("--rounds", type=int, default=5, help="bench: timed rounds, best kept")
    parser.add_argument("mode", choices=["texts", "requests", "bench"])
    args = parser.parse_args()

    encodings = load_encodings(args.ranks_dir)
    items = read_lines()
    out = sys.stdout

    if args.mode == "texts":
        for text in items:
            out.write(json.dumps({name: count(enc, text) for name, enc in encodings.items()}) + "\n")
    elif args.mode == "requests":
        for request in items:
            result = {}
            for name, enc in encodings.items():
                per_message = num_tokens_from_messages(enc, request.get("messages", []))
                tools = num_tokens_for_tools(enc, name, request.get("tools", []))
                result[name] = {
                    "messages": per_message,
                    "tools": tools,
                    "total": sum(per_message) + tools + 3,
                }
            out.write(json.dumps(result) + "\n")
    else:
        texts = items
        size = sum(len(t.encode("utf-8")) for t in texts)
        result = {}
        for name, enc in encodings.items():
            enc.encode_ordinary("warm up")
            best = float("inf")
            for _ in range(max(args.rounds, 1)):
                start = time.perf_counter()
                for text in texts:
                    enc.encode_ordinary(text)
                best = min(best, time.perf_counter() - start)
            result[name] = {"bytes": size, "seconds": best, "mb_per_s": size / best / 1e6}
        out.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
