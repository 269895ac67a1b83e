#!/usr/bin/env python3
"""Writes N synthetic messages (plain line format, or a JSON array with --json) for `sanad credit analyze`
throughput runs: `bench/credit-messages.py 1000000 > /tmp/m.txt; sanad credit analyze /tmp/m.txt --threads 2`.
Seeded: the same N gives the same file."""
import datetime, json, random, sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
as_json = "--json" in sys.argv
rng = random.Random(23)
contacts = ["Mom", "Sam", "Lina", "أمي", "Omar", "Work"]
phrases = ["good morning habibi", "I will pay the loan tomorrow", "paid, I transferred the money",
           "still waiting for the rent", "thanks, love you", "sorry I am worried about the debt",
           "سأسدد القرض بكرة إن شاء الله", "حولت لك الإيجار", "صباح الخير يا حبيبي", "new idea: a course together?",
           "let's meet for coffee with friends", "ok", "see you at dinner!"]
out = sys.stdout
if as_json:
    out.write("[\n")
for i in range(n):
    t = 1704067200 + i * 37
    d = datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    c = rng.choice(contacts)
    me = rng.random() < 0.5
    text = rng.choice(phrases) + " " + str(i)
    if as_json:
        rec = {"id": i, "date": d + "Z", "sender": "me" if me else c, "isFromMe": me, "chat": c, "text": text}
        out.write(json.dumps(rec, ensure_ascii=False) + (",\n" if i + 1 < n else "\n"))
    else:
        out.write(f"{d} | {'me' if me else c} | {text}\n")
if as_json:
    out.write("]\n")
