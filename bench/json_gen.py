#!/usr/bin/env python3
"""Deterministic synthetic agent-log JSONL for bench/json.sh (python3 stdlib only).

Each line is one agent step: ids, timestamps (ISO and int64 nanoseconds above 2^53), model
and provider, sampling parameters, a transcript of system/user/assistant/tool messages with
tool calls, tool outputs holding code, directory listings, ANSI escapes, tabs, quotes,
backslashes and non-ASCII text, usage counters, floats with exponents and nested metadata.
About a third of the lines are written ASCII-only (\\uXXXX escapes), the rest as raw UTF-8.

usage: json_gen.py OUT.jsonl [SIZE_MB=150] [SEED=7]
"""
import json
import random
import sys

out_path = sys.argv[1]
target = int(float(sys.argv[2] if len(sys.argv) > 2 else 150) * 1_000_000)
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 7)

VOCAB = ("agent step tool call result error retry buffer parse read write index column table "
         "schema query commit branch thread socket cache latency token model output input file "
         "path config request response stream header payload value count offset length").split()
INTL = ["Grüße", "façade", "Kraków", "東京都", "数据库", "서울", "Αθήνα", "Москва", "שלום",
        "مرحبا", "🙂", "🛠️", "✔", "→", "±", "µ", "…"]
TOOLS = ["shell", "open_file", "edit_file", "grep", "run_tests", "http_get", "ls"]
MODELS = [("anthropic", "claude-opus-4"), ("openai", "gpt-5"), ("google", "gemini-2.5-flash"),
          ("mistral", "codestral"), ("local", "qwen3-coder-30b")]


def hexid(n):
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def words(lo, hi):
    out = []
    for _ in range(rng.randint(lo, hi)):
        out.append(rng.choice(INTL) if rng.random() < 0.04 else rng.choice(VOCAB))
    return " ".join(out)


def code_block():
    lines = []
    for i in range(rng.randint(3, 40)):
        ind = "    " * rng.randint(0, 3)
        kind = rng.random()
        if kind < 0.3:
            lines.append(f'{ind}if (n > {rng.randint(0, 999)}) return "{rng.choice(VOCAB)}";')
        elif kind < 0.5:
            lines.append(f"{ind}path = \"C:\\\\Users\\\\dev\\\\{rng.choice(VOCAB)}.txt\"\t# {words(1, 5)}")
        elif kind < 0.6:
            lines.append(f"{ind}\x1b[32mok\x1b[0m {words(2, 6)}\r")
        else:
            lines.append(f"{ind}{rng.choice(VOCAB)}_{i} = {rng.choice(VOCAB)}({rng.randint(0, 99)}, '{words(1, 3)}')")
    return "\n".join(lines)


def listing():
    rows = []
    for _ in range(rng.randint(3, 30)):
        rows.append(f"-rw-r--r--  1 dev dev {rng.randint(0, 10**7):>9} Jan {rng.randint(1, 28):2} "
                    f"{rng.randint(0, 23):02}:{rng.randint(0, 59):02} {rng.choice(VOCAB)}_{hexid(4)}.py")
    return "\n".join(rows)


def message(role):
    if role == "tool":
        body = rng.choice([code_block, listing, lambda: words(10, 120)])()
        return {"role": "tool", "tool_call_id": "call_" + hexid(12), "content": body,
                "is_error": rng.random() < 0.1}
    if role == "assistant":
        m = {"role": "assistant", "content": [{"type": "text", "text": words(5, 80)}]}
        for _ in range(rng.randint(0, 3)):
            m["content"].append({"type": "tool_use", "id": "call_" + hexid(12),
                                 "name": rng.choice(TOOLS),
                                 "input": {"command": f"{rng.choice(TOOLS)} --path ./{rng.choice(VOCAB)}",
                                           "timeout_ms": rng.randint(100, 120000),
                                           "args": [words(1, 2) for _ in range(rng.randint(0, 4))]}})
        return m
    return {"role": role, "content": words(5, 150)}


def record(i):
    provider, model = rng.choice(MODELS)
    ts = 1_750_000_000 + i * 3 + rng.randint(0, 2)
    msgs = [message("system")]
    for _ in range(rng.randint(1, 8)):
        msgs.append(message("user" if rng.random() < 0.3 else "assistant"))
        msgs.append(message("tool"))
    return {
        "trace_id": hexid(32), "span_id": hexid(16), "parent_span_id": hexid(16) if i % 4 else None,
        "session": f"sess-{i // 50:06d}", "step": i % 50,
        "timestamp": f"2025-06-{1 + (ts // 86400) % 28:02}T{(ts // 3600) % 24:02}:{(ts // 60) % 60:02}:{ts % 60:02}.{rng.randint(0, 999):03}Z",
        "ts_ns": ts * 1_000_000_000 + rng.randint(0, 999_999_999),
        "provider": provider, "model": model,
        "params": {"temperature": round(rng.random(), 2), "top_p": 0.95, "max_tokens": rng.choice([1024, 4096, 8192]),
                   "stop": ["\n\nHuman:", "</done>"]},
        "messages": msgs,
        "usage": {"input_tokens": rng.randint(100, 200000), "output_tokens": rng.randint(1, 8000),
                  "cache_read": rng.randint(0, 100000), "cost_usd": rng.random() * 1e-2,
                  "latency_s": rng.lognormvariate(0, 1)},
        "reward": None if rng.random() < 0.5 else rng.uniform(-1, 1),
        "tags": [rng.choice(VOCAB) for _ in range(rng.randint(0, 6))],
        "meta": {"host": f"worker-{rng.randint(1, 64)}", "pid": rng.randint(100, 65535),
                 "ratio": rng.random() * 10 ** rng.randint(-12, 12), "ok": rng.random() < 0.9,
                 "nested": {"a": [1, 2.5, -3e-7, {"b": None}], "c": {}}},
    }


written = 0
i = 0
with open(out_path, "w", encoding="utf-8", newline="\n") as f:
    while written < target:
        line = json.dumps(record(i), ensure_ascii=(i % 3 == 0), separators=(",", ":"))
        f.write(line)
        f.write("\n")
        written += len(line.encode("utf-8")) + 1
        i += 1
print(f"{out_path}: {i} lines, {written} bytes")
