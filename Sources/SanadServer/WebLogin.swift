import Foundation
import SanadCore

/// The web app's login, for a server that needs the API key (`--api-key`, required beyond loopback): a page without
/// the key gets the login page (401) instead of itself; `POST /login {"key"}` checks the key in constant time and
/// keeps it in the `sanad_key` cookie (`HttpOnly`: no script reads it; `SameSite=Strict`: no other site's page sends
/// it; `Secure` when the browser reached the server over TLS), so the pages' own calls carry it. A call that
/// changes data on the strength of the cookie alone must come from this server's own origin (`Origin`, which every
/// browser sends with a POST), so another site's page cannot make it.
enum WebLogin {
    /// The cookie that keeps the key.
    static let cookieName = "sanad_key"
    /// The login call.
    static let path = "/login"
    /// The logout call (the cookie cleared).
    static let logoutPath = "/logout"

    /// The cookie's value for `key`: its bytes in hex (any key, whatever its characters, is a valid cookie value).
    static func cookieValue(_ key: String) -> String { key.utf8.map { String(format: "%02x", $0) }.joined() }

    /// Whether the request's `sanad_key` cookie holds `key` (compared in constant time).
    static func cookieMatches(_ head: HTTPRequestHead, key: String) -> Bool {
        guard let value = cookie(cookieName, in: head) else { return false }
        return constantTimeEqual(Array(value.utf8), Array(cookieValue(key).utf8))
    }

    /// Whether the browser reached this server over TLS: its `Origin` is `https://…`, or a TLS-terminating proxy
    /// in front says so (`X-Forwarded-Proto: https`).
    static func overTLS(_ head: HTTPRequestHead) -> Bool {
        head.header("origin")?.lowercased().hasPrefix("https://") == true
            || head.header("x-forwarded-proto")?.lowercased() == "https"
    }

    /// The `Set-Cookie` value keeping `key` (`nil`: clearing it).
    static func setCookie(_ key: String?, secure: Bool) -> String {
        let value = key.map(cookieValue) ?? ""
        return "\(cookieName)=\(value); Path=/; HttpOnly; SameSite=Strict"
            + (key == nil ? "; Max-Age=0" : "") + (secure ? "; Secure" : "")
    }

    /// Answers `POST /login {"key": "…"}` (the browser checks done): 200 and the cookie for the right key, a 401
    /// naming the field for a wrong one.
    static func login(_ request: HTTPRequest, key: String) throws(APIError) -> HTTPResponse {
        let body = try decodeJSONObject(request.body, maximumBytes: 64 << 10)
        guard let given = body["key"]?.stringValue else { throw APIError.invalid("key", "'key' must be a string") }
        guard constantTimeEqual(Array(given.utf8), Array(key.utf8)) else {
            throw APIError(
                401, "that is not this server's API key (the one given to sanad serve --api-key or SANAD_API_KEY)",
                param: "key", code: "invalid_api_key")
        }
        return .json(
            200, #"{"ok":true}"#, headers: [("Set-Cookie", setCookie(key, secure: overTLS(request.head)))])
    }

    /// The login page for a page asked without the key: the product's (`ChatProduct.loginPage`), or a plain one.
    static func page(_ productPage: String?) -> HTTPResponse {
        var response = HTTPResponse.text(401, productPage ?? plainPage, contentType: "text/html; charset=utf-8")
        response.headers.append(("Cache-Control", "no-store"))
        return response
    }

    /// The login page of a product without its own: a labelled key box, the error announced next to it, and the
    /// page reloaded once the cookie is set.
    static let plainPage = """
        <!doctype html>
        <html lang="en" dir="ltr"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign in</title></head>
        <body><main><h1>Sign in</h1>
        <form id="login"><label for="key">API key</label>
        <input id="key" name="key" type="password" autocomplete="current-password" required aria-describedby="error">
        <p id="error" role="alert"></p><button type="submit">Sign in</button></form></main>
        <script>
        document.getElementById("login").onsubmit = async e => {
          e.preventDefault();
          const box = document.getElementById("key");
          const r = await fetch("/login", { method: "POST", headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ key: box.value }) });
          if (r.ok) { location.reload(); return; }
          box.setAttribute("aria-invalid", "true");
          document.getElementById("error").textContent = (await r.json()).error.message;
          box.focus();
        };
        </script></body></html>
        """
}

/// The value of the cookie `name` in the request, or nil.
func cookie(_ name: String, in head: HTTPRequestHead) -> String? {
    for header in head.headers where header.name == "cookie" {
        for pair in header.value.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0] == name { return parts[1] }
        }
    }
    return nil
}
