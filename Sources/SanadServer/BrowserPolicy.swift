/// What a web page may make the server do. A page on another site can send requests to a loopback server (and a
/// DNS rebinding page can read the answers), so: the `Host` a request names must be one the server answers to, and
/// a request that changes state or runs the model must be `Content-Type: application/json` (which a cross-site page
/// cannot send without a preflight the server never grants) and, when a browser says where it comes from
/// (`Origin`), come from the server's own origin or an allowed one.
public struct BrowserPolicy: Sendable {
    /// Host names (lower-case, without the port) a request may name; nil: any.
    public var hosts: Set<String>?
    /// Origins (`scheme://host[:port]`, lower-case) allowed besides the server's own.
    public var origins: Set<String>

    /// This machine's names.
    public static let loopbackNames: Set<String> = ["localhost", "127.0.0.1", "::1"]

    /// The names of a server bound to `bindHost`: the loopback names, the bound address (unless a wildcard), and
    /// `allowedHosts` (`*` = any host). Bound to a wildcard (0.0.0.0, ::) without `allowedHosts`, any host is
    /// answered (the API key, required there, guards it).
    public init(bindHost: String, allowedHosts: [String] = [], allowedOrigins: [String] = []) {
        let wildcard = bindHost == "0.0.0.0" || bindHost == "::" || bindHost.isEmpty
        if allowedHosts.contains("*") || (wildcard && allowedHosts.isEmpty) {
            hosts = nil
        } else {
            hosts = Self.loopbackNames.union(allowedHosts.map { $0.lowercased() })
            if !wildcard { hosts?.insert(hostName(bindHost.lowercased())) }
        }
        origins = Set(allowedOrigins.map { $0.lowercased() })
    }

    /// A 400 when the request's `Host` is not served (a request without one, from an HTTP/1.0 client, passes).
    public func checkHost(_ head: HTTPRequestHead) -> APIError? {
        guard let hosts, let host = head.header("host") else { return nil }
        let name = hostName(host.lowercased())
        guard !hosts.contains(name) else { return nil }
        return APIError(
            400,
            "this server does not answer to Host '\(host)' (it answers to \(hosts.sorted().joined(separator: ", "))); "
                + "start it with --allowed-hosts \(name) to serve that name",
            code: "host_not_allowed")
    }

    /// A 415 or 403 when a request that changes state or runs the model is not JSON from an allowed origin;
    /// `originRequired` (a request the login cookie authorizes): a 403 too when it does not say its `Origin`.
    public func checkStateChanging(_ head: HTTPRequestHead, originRequired: Bool = false) -> APIError? {
        let type = (head.header("content-type") ?? "").split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard type == "application/json" else {
            return APIError(
                415,
                "a \(head.method) to \(head.path) needs 'Content-Type: application/json' (got "
                    + "\(head.header("content-type").map { "'\($0)'" } ?? "none"); with curl add -H "
                    + "'Content-Type: application/json')",
                code: "unsupported_media_type")
        }
        guard let origin = head.header("origin")?.lowercased() else {
            guard originRequired else { return nil }
            return APIError(
                403,
                "a \(head.method) to \(head.path) signed in by the web app's cookie must come from this server's "
                    + "own page (the request has no Origin); a client that is not a browser sends "
                    + "'Authorization: Bearer KEY' instead",
                code: "origin_not_allowed")
        }
        if allowsCrossOrigin(origin) { return nil }
        if let host = head.header("host")?.lowercased(), origin == "http://" + host || origin == "https://" + host {
            return nil
        }
        return APIError(
            403,
            "requests from the page at '\(origin)' are not allowed (only this server's own pages); start it with "
                + "--allowed-origins \(origin) to allow that site",
            code: "origin_not_allowed")
    }
}

extension BrowserPolicy {
    /// Whether pages at `origin` may call this server from another origin (CORS): one of `--allowed-origins`, or
    /// any with `*` there. None by default: a page of any other site cannot read the model's answers.
    public func allowsCrossOrigin(_ origin: String) -> Bool {
        origins.contains("*") || origins.contains(origin.lowercased())
    }

    /// `Access-Control-Allow-Origin` (the request's origin) and `Vary: Origin` for a request from an allowed origin,
    /// on every response to it, errors included (so its page can read why it was refused); none otherwise.
    public func corsHeaders(_ head: HTTPRequestHead) -> [(name: String, value: String)] {
        guard let origin = head.header("origin"), allowsCrossOrigin(origin) else { return [] }
        return [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
    }

    /// The answer to `OPTIONS` on a route taking `methods`: a CORS preflight from an allowed origin gets 204 with
    /// the methods, the headers it asks for (the API key's `Authorization` and `Content-Type` when it asks for
    /// none) and a 10-minute cache (its `Access-Control-Allow-Origin` comes from `corsHeaders`); one from another
    /// origin 403; a plain `OPTIONS` 204 with `Allow`.
    public func preflight(_ head: HTTPRequestHead, methods: [String]) -> HTTPResponse {
        let allow = (methods + ["OPTIONS"]).joined(separator: ", ")
        guard let origin = head.header("origin") else { return HTTPResponse(status: 204, headers: [("Allow", allow)]) }
        guard allowsCrossOrigin(origin) else {
            return APIError(
                403,
                "pages at '\(origin)' may not call this server (no cross-origin access by default); start it with "
                    + "--allowed-origins \(origin) to allow that site",
                code: "origin_not_allowed"
            ).response
        }
        let asked = (head.header("access-control-request-headers") ?? "").filter {
            $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "," || $0 == " "
        }
        return HTTPResponse(
            status: 204,
            headers: [
                ("Allow", allow), ("Access-Control-Allow-Methods", allow),
                ("Access-Control-Allow-Headers", asked.isEmpty ? "Authorization, Content-Type" : asked),
                ("Access-Control-Max-Age", "600"),
            ])
    }
}

/// `host[:port]` or `[v6]:port` without the port and brackets.
func hostName(_ host: String) -> String {
    if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
        return String(host[host.index(after: host.startIndex)..<close])
    }
    if host.filter({ $0 == ":" }).count == 1, let colon = host.lastIndex(of: ":") {
        return String(host[..<colon])
    }
    return host
}
