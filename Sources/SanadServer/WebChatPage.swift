/// The web chat page `/` serves: Arabic, right to left, plain HTML, CSS and JavaScript (no build step). It opens a
/// conversation (greeting and chips, or the load failure with a retry button), streams replies, shows each reply's
/// deep link as a button that opens its page, and returns from a page to the chat.
let webChatPage = #"""
    <!doctype html>
    <html lang="ar" dir="rtl">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>سند — مساعد أبشر</title>
    <style>
    body { margin: 0; font-family: system-ui, "Noto Naskh Arabic", sans-serif; background: #f3f6f4; color: #1b1b1b; }
    header { background: #0b6b3a; color: #fff; padding: 12px 16px; font-size: 18px; }
    main { max-width: 720px; margin: 0 auto; padding: 12px; display: flex; flex-direction: column; gap: 8px;
      min-height: calc(100vh - 140px); }
    .bubble { padding: 10px 14px; border-radius: 14px; max-width: 85%; white-space: pre-wrap; line-height: 1.6; }
    .assistant { background: #fff; align-self: flex-start; border: 1px solid #dde5df; }
    .user { background: #0b6b3a; color: #fff; align-self: flex-end; }
    .draft { color: #6b7a70; font-style: italic; border-style: dashed; }
    .draft::before { content: "مسودة يتحقق منها سند: "; font-style: normal; }
    .note { display: block; margin-top: 6px; font-size: 12px; color: #5b6b60; }
    .error { background: #fdecea; color: #8a1c12; align-self: stretch; }
    .link { display: inline-block; margin-top: 8px; background: #e7f3ec; color: #0b6b3a; border: 1px solid #0b6b3a;
      border-radius: 10px; padding: 6px 12px; cursor: pointer; font: inherit; }
    #chips { display: flex; flex-wrap: wrap; gap: 8px; max-width: 720px; margin: 0 auto; padding: 0 12px; }
    .chip { background: #fff; border: 1px solid #0b6b3a; color: #0b6b3a; border-radius: 18px; padding: 6px 14px;
      cursor: pointer; font: inherit; }
    form { display: flex; gap: 8px; max-width: 720px; margin: 8px auto; padding: 0 12px; }
    input { flex: 1; padding: 10px; border-radius: 10px; border: 1px solid #b9c7bd; font: inherit; }
    button[type=submit], #retry, #back { background: #0b6b3a; color: #fff; border: 0; border-radius: 10px;
      padding: 10px 16px; font: inherit; cursor: pointer; }
    #page { display: none; max-width: 720px; margin: 0 auto; padding: 12px; }
    #page section { background: #fff; border-radius: 12px; padding: 10px 14px; margin-bottom: 10px; }
    #page dt { color: #51635a; } #page dd { margin: 0 0 6px 0; font-weight: 600; }
    #failure { display: none; text-align: center; padding: 24px; }
    </style>
    </head>
    <body>
    <header>سند — مساعد أبشر</header>
    <div id="failure"><p id="failure-text">تعذّر تحميل المساعد.</p><button id="retry">إعادة المحاولة</button></div>
    <div id="chat">
      <main id="messages" aria-live="polite"></main>
      <div id="chips"></div>
      <form id="composer"><input id="text" autocomplete="off" placeholder="اكتب سؤالك…">
        <button type="submit">إرسال</button></form>
    </div>
    <div id="page"><h2 id="page-title"></h2><div id="page-body"></div><button id="back">العودة إلى المحادثة</button></div>
    <script>
    "use strict";
    let conversation = null, busy = false;
    const $ = id => document.getElementById(id);
    function headers() {
      const h = { "Content-Type": "application/json" };
      const key = localStorage.getItem("sanadKey");
      if (key) h["Authorization"] = "Bearer " + key;
      return h;
    }
    async function post(path, body) {
      let r = await fetch(path, { method: "POST", headers: headers(), body: JSON.stringify(body) });
      if (r.status === 401) {
        const key = prompt("مفتاح الخادم (API key):");
        if (key) { localStorage.setItem("sanadKey", key); r = await fetch(path, { method: "POST", headers: headers(), body: JSON.stringify(body) }); }
      }
      return r;
    }
    function bubble(kind, text) {
      const d = document.createElement("div");
      d.className = "bubble " + kind;
      d.textContent = text;
      $("messages").appendChild(d);
      d.scrollIntoView({ block: "end" });
      return d;
    }
    function show(message, into) {
      const d = into || bubble(message.isUser ? "user" : "assistant", "");
      d.classList.remove("draft");
      d.textContent = message.content;
      if (message.check) {
        const n = document.createElement("small");
        n.className = "note";
        n.textContent = message.check.note;
        d.appendChild(n);
      }
      if (message.link) {
        const b = document.createElement("button");
        b.className = "link";
        b.textContent = message.link.title;
        b.dataset.url = message.link.url;
        b.onclick = () => follow(message.link.url);
        d.appendChild(document.createElement("br"));
        d.appendChild(b);
      }
      return d;
    }
    function chips(list) {
      const c = $("chips");
      c.innerHTML = "";
      for (const chip of list) {
        const b = document.createElement("button");
        b.className = "chip";
        b.textContent = chip.text;
        b.onclick = () => send({ chip: chip.id });
        c.appendChild(b);
      }
    }
    async function open() {
      $("failure").style.display = "none";
      $("chat").style.display = "block";
      $("messages").innerHTML = "";
      try {
        const r = await post("/chat/open", {});
        const s = await r.json();
        if (!r.ok) throw new Error(s.error ? s.error.message : r.statusText);
        conversation = s.conversation;
        s.messages.forEach(m => show(m));
        chips(s.chips);
        if (s.failure) throw new Error(s.failure);
      } catch (e) {
        $("failure-text").textContent = "تعذّر تحميل المساعد: " + e.message;
        $("failure").style.display = "block";
        $("chat").style.display = "none";
      }
    }
    async function send(body) {
      if (busy || !conversation) return;
      busy = true;
      let current = null;
      try {
        const r = await post("/chat/send", Object.assign({ conversation }, body));
        if (!r.ok) { const e = await r.json(); bubble("error", e.error.message); return; }
        const reader = r.body.getReader(), decoder = new TextDecoder();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let end;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const data = buffer.slice(0, end).replace(/^data: /gm, "");
            buffer = buffer.slice(end + 2);
            if (data === "[DONE]") continue;
            const e = JSON.parse(data);
            if (e.type === "message") show(e.message);
            else if (e.type === "start") { current = bubble("assistant" + (e.draft ? " draft" : ""), ""); }
            else if (e.type === "piece" && current) { current.textContent += e.text; current.scrollIntoView({ block: "end" }); }
            else if (e.type === "reply") { show(e.message, current); current = null; }
            else if (e.type === "chips") chips(e.chips);
            else if (e.type === "error") bubble("error", e.message);
          }
        }
      } catch (e) {
        bubble("error", "انقطع الاتصال: " + e.message);
      } finally {
        busy = false;
      }
    }
    async function follow(url) {
      const r = await post("/chat/follow", { conversation, url });
      const page = await r.json();
      if (!r.ok) { bubble("error", page.error.message); return; }
      $("page-title").textContent = page.title;
      const body = $("page-body");
      body.innerHTML = "";
      for (const s of page.sections) {
        const section = document.createElement("section");
        if (s.heading) { const h = document.createElement("h3"); h.textContent = s.heading; section.appendChild(h); }
        const dl = document.createElement("dl");
        for (const f of s.fields) {
          const dt = document.createElement("dt"), dd = document.createElement("dd");
          dt.textContent = f.label; dd.textContent = f.value;
          dl.appendChild(dt); dl.appendChild(dd);
        }
        section.appendChild(dl);
        body.appendChild(section);
      }
      for (const n of page.notes) { const p = document.createElement("p"); p.textContent = n; body.appendChild(p); }
      $("page").dataset.screen = page.screen;
      $("chat").style.display = "none";
      $("page").style.display = "block";
    }
    $("back").onclick = async () => {
      await post("/chat/back", { conversation });
      $("page").style.display = "none";
      $("chat").style.display = "block";
    };
    $("retry").onclick = open;
    $("composer").onsubmit = e => {
      e.preventDefault();
      const text = $("text").value.trim();
      if (text) { $("text").value = ""; send({ text }); }
    };
    open();
    </script>
    </body>
    </html>
    """#
