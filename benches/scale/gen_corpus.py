#!/usr/bin/env python3
"""Deterministic corpus for the whole-process benchmarks of issue 11.

    python3 benches/scale/gen_corpus.py N OUT.jsonl

Writes N transcripts, one per line (JSONL), each carrying the same 13 tools.
Outputs: 60% tool calls in six wire formats (hermes, llama3, mistral,
deepseek, kimi, glm — each with the model name that selects it), 30% prose,
10% malformed calls (broken JSON, a missing closer, an unknown tool, a
schema violation). Mean output about 1,650 bytes, so 20,000 transcripts hold
about 33 MB of model text. Same N, same bytes: random.Random(N).
"""

import json
import random
import sys

WORDS = (
    "the weather report for tomorrow says we should expect light rain in the "
    "morning and clearing skies by noon so I will check the forecast again "
    "before booking anything données 東京 café naïve résumé 🙂 {braces} "
    "[brackets] \"quotes\" /usr/local/path see ticket #4521 and note that "
    "numbers like 3.14 and 1e9 appear in prose too"
).split()

CITIES = ["Antwerp", "Paris", "Tokyo", "São Paulo", "Zürich", "Nairobi", "Lima", "Oslo"]

def tool(name, props, required):
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"The {name.replace('_', ' ')} tool.",
            "parameters": {
                "type": "object",
                "properties": props,
                "required": required,
                "additionalProperties": False,
            },
        },
    }

S = {"type": "string"}
I = {"type": "integer", "minimum": 0, "maximum": 10000}
TOOLS = [
    tool("get_weather", {"city": S, "days": {"type": "integer", "minimum": 1, "maximum": 14}}, ["city"]),
    tool("search_web", {"query": S, "limit": I}, ["query"]),
    tool("send_email", {"to": S, "subject": S, "body": S}, ["to", "subject", "body"]),
    tool("create_event", {"title": S, "start": S, "minutes": I}, ["title", "start"]),
    tool("get_stock_price", {"symbol": S}, ["symbol"]),
    tool("translate", {"text": S, "target": {"type": "string", "enum": ["en", "fr", "de", "ja"]}}, ["text", "target"]),
    tool("read_file", {"path": S}, ["path"]),
    tool("write_file", {"path": S, "content": S}, ["path", "content"]),
    tool("run_sql", {"query": S, "timeout_s": I}, ["query"]),
    tool("book_flight", {"from": S, "to": S, "date": S, "seats": I}, ["from", "to", "date"]),
    tool("convert_currency", {"amount": {"type": "number"}, "from": S, "to": S}, ["amount", "from", "to"]),
    tool("set_reminder", {"text": S, "at": S}, ["text", "at"]),
    tool("lookup_user", {"user_id": I}, ["user_id"]),
]

MODELS = {
    "hermes": "qwen3-8b",
    "llama3": "llama-3.1-8b-instruct",
    "mistral": "mistral-small-3.1",
    "deepseek": "deepseek-v3",
    "kimi": "kimi-k2-instruct",
    "glm": "glm-4.5",
}
FORMATS = list(MODELS)


def prose(rng, n_bytes):
    out, size = [], 0
    while size < n_bytes:
        w = rng.choice(WORDS)
        out.append(w)
        size += len(w.encode()) + 1
    return " ".join(out)


def call_args(rng):
    """A get_weather or search_web call with arguments of 50 B – 2 KB."""
    if rng.random() < 0.5:
        return "get_weather", {"city": rng.choice(CITIES), "days": rng.randint(1, 7)}
    return "search_web", {"query": prose(rng, rng.randint(30, 1800)), "limit": rng.randint(1, 50)}


def render(fmt, name, args):
    a = json.dumps(args, ensure_ascii=False)
    if fmt == "hermes":
        return f'<tool_call>\n{{"name": "{name}", "arguments": {a}}}\n</tool_call>'
    if fmt == "llama3":
        return f'<|python_tag|>{{"name": "{name}", "parameters": {a}}}'
    if fmt == "mistral":
        return f"[TOOL_CALLS]{name}[ARGS]{a}"
    if fmt == "deepseek":
        return (
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
            f"{name}\n```json\n{a}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        )
    if fmt == "kimi":
        return (
            "<|tool_calls_section_begin|><|tool_call_begin|>"
            f"functions.{name}:0<|tool_call_argument_begin|>{a}"
            "<|tool_call_end|><|tool_calls_section_end|>"
        )
    if fmt == "glm":
        parts = "".join(
            f"<arg_key>{k}</arg_key>\n<arg_value>{v if isinstance(v, str) else json.dumps(v)}</arg_value>\n"
            for k, v in args.items()
        )
        return f"<tool_call>{name}\n{parts}</tool_call>"
    raise ValueError(fmt)


def malformed(rng, fmt, name, args):
    kind = rng.randrange(4)
    if kind == 0:  # broken JSON: a comma dropped
        text = render(fmt, name, args)
        return text.replace(", ", " ", 1) if ", " in text else text[:-3]
    if kind == 1:  # cut off inside the call (length)
        text = render(fmt, name, args)
        return text[: max(1, len(text) * 2 // 3)]
    if kind == 2:  # a tool that is not offered
        return render(fmt, "delete_everything", args)
    bad = dict(args)  # schema violation
    bad["days" if name == "get_weather" else "limit"] = "many"
    return render(fmt, name, bad)


def main():
    n = int(sys.argv[1])
    out = sys.argv[2]
    rng = random.Random(n)
    tools = TOOLS
    with open(out, "w", encoding="utf-8") as f:
        for i in range(n):
            fmt = FORMATS[i % len(FORMATS)]
            roll = rng.random()
            before = prose(rng, rng.randint(300, 1800))
            if roll < 0.3:
                output = before + " " + prose(rng, rng.randint(100, 700))
                expect = {"calls": []}
            else:
                name, args = call_args(rng)
                if roll < 0.9:
                    output = before + "\n" + render(fmt, name, args)
                else:
                    output = before + "\n" + malformed(rng, fmt, name, args)
                expect = {"calls": [{"name": name}]}
            t = {
                "id": f"t{i:06}",
                "model": MODELS[fmt],
                "task": f"task_{i % 49}",
                "expect": expect,
                "output": output,
                "tools": tools,
            }
            f.write(json.dumps(t, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
