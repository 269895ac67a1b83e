/// What every place's page of the web app shares, served at `/app.css` and `/app.js` (no product text: each page
/// brings its own words): the look of the header, sections, buttons and errors, and the helpers its script uses —
/// the language from `?lang=` applied to the page and its header, text with dates and numbers in left-to-right
/// spans that do not break, the JSON calls (an error's message thrown), and a file's bytes in base64.
enum WebAppAssets {
    /// The assets by path, with their content types.
    static let files: [String: (contentType: String, text: String)] = [
        "/app.css": ("text/css; charset=utf-8", style), "/app.js": ("text/javascript; charset=utf-8", script),
    ]

    static let style = """
        body { margin: 0; font-family: system-ui, "Noto Naskh Arabic", sans-serif; background: #f3f6f4; color: #1b1b1b; }
        header { background: #0b6b3a; color: #fff; padding: 10px 16px; display: flex; gap: 12px; align-items: center;
          flex-wrap: wrap; }
        header h1 { font-size: 18px; margin: 0; flex: 1; }
        header nav a, header button { color: #fff; background: transparent; border: 1px solid #ffffff80;
          border-radius: 8px; padding: 4px 10px; font: inherit; font-size: 15px; text-decoration: none; cursor: pointer; }
        header nav a[aria-current=page] { background: #ffffff30; }
        main { max-width: 760px; margin: 0 auto; padding: 12px; box-sizing: border-box; }
        :focus-visible { outline: 3px solid #f0b400; outline-offset: 2px; }
        section { background: #fff; border: 1px solid #dde5df; border-radius: 12px; padding: 12px 16px;
          margin-bottom: 12px; }
        h2 { font-size: 18px; margin: 0 0 10px 0; } h3 { font-size: 16px; margin: 12px 0 6px 0; }
        button, .button { background: #0b6b3a; color: #fff; border: 0; border-radius: 10px; padding: 10px 16px;
          font: inherit; cursor: pointer; text-decoration: none; display: inline-block; }
        button.secondary, .button.secondary { background: #fff; color: #0b6b3a; border: 1px solid #0b6b3a; }
        button:disabled { opacity: .45; cursor: default; }
        label.field { display: block; font-weight: 600; margin: 8px 0 4px 0; }
        fieldset label, label.check { display: block; padding: 6px 0; font-size: 17px; }
        input[aria-invalid=true], textarea[aria-invalid=true] { outline: 2px solid #b3261e; }
        .row { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; }
        .meta { color: #51635a; font-size: 14px; }
        .error { color: #8a1c12; background: #fdecea; border-radius: 8px; padding: 8px 10px; margin-top: 8px; }
        .error:empty { display: none; }
        .ok { color: #0b6b3a; } .bad { color: #8a1c12; }
        progress { width: 100%; height: 10px; accent-color: #0b6b3a; }
        dt { color: #51635a; } dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
        .num { unicode-bidi: isolate; direction: ltr; white-space: nowrap; }
        [hidden] { display: none !important; }
        @media (max-width: 480px) { main { padding: 8px; } }
        """

    static let script = """
        "use strict";
        const $ = id => document.getElementById(id);
        // The page's words for `?lang=` (else the first language of WORDS), applied to <html>, the title and the
        // header: each place's link keeps the language, and the switch names the other one and goes there.
        function useWords(WORDS) {
          const params = new URLSearchParams(location.search);
          const lang = WORDS[params.get("lang")] ? params.get("lang") : Object.keys(WORDS)[0];
          const words = WORDS[lang];
          document.documentElement.lang = lang;
          document.documentElement.dir = words.dir;
          document.title = words.title;
          if ($("title")) $("title").textContent = words.title;
          for (const place of ["chat", "forms", "documents", "credit"]) {
            const link = $("nav-" + place);
            if (link && words[place]) {
              link.textContent = words[place];
              link.href = (place === "chat" ? "/" : "/" + place) + "?lang=" + lang;
            }
          }
          const other = $("lang");
          if (other) {
            other.textContent = words.otherName; other.lang = words.other;
            other.onclick = () => { params.set("lang", words.other); location.search = params.toString(); };
          }
          return { lang, words };
        }
        // `text` into `element`, each date or number in a left-to-right span that does not wrap; digits that are
        // part of a name (DS-160) stay in the word's own order.
        function fill(element, text) {
          element.textContent = "";
          let at = 0;
          const pattern = /(?<![\\p{L}\\p{N}_][-\\/]?)[0-9\\u0660-\\u0669]+(?:[-\\/:.,][0-9\\u0660-\\u0669]+)*(?![-\\/]?[\\p{L}_])/gu;
          for (const m of String(text).matchAll(pattern)) {
            element.append(text.slice(at, m.index));
            const span = document.createElement("bdi");
            span.className = "num"; span.dir = "ltr"; span.textContent = m[0];
            element.append(span);
            at = m.index + m[0].length;
          }
          element.append(String(text).slice(at));
          return element;
        }
        function el(tag, text, props) {
          const e = document.createElement(tag);
          if (text != null) fill(e, text);
          return Object.assign(e, props || {});
        }
        // A JSON call of this server (a POST as JSON, the way every change goes); an error's message is thrown.
        async function call(method, path, body) {
          const r = await fetch(path, method === "GET" ? {} :
            { method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) });
          const json = await r.json();
          if (!r.ok) throw new Error(json.error ? json.error.message : r.statusText);
          return json;
        }
        // A file's bytes in base64 (an upload goes as JSON too).
        async function base64(file) {
          const bytes = new Uint8Array(await file.arrayBuffer());
          let text = "";
          for (let i = 0; i < bytes.length; i += 32768) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 32768));
          return btoa(text);
        }
        """
}
