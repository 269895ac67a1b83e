import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A complete response (status, headers, body), sent with Content-Length.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func json(_ status: Int, _ text: String, headers: [(name: String, value: String)] = [])
        -> HTTPResponse
    {
        HTTPResponse(
            status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(text.utf8))
    }

    public static func text(_ status: Int, _ text: String, contentType: String = "text/plain; charset=utf-8")
        -> HTTPResponse
    {
        HTTPResponse(status: status, headers: [("Content-Type", contentType)], body: Array(text.utf8))
    }
}

/// The reason phrase for the statuses this server sends.
func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 200: return "OK"
    case 204: return "No Content"
    case 400: return "Bad Request"
    case 401: return "Unauthorized"
    case 403: return "Forbidden"
    case 404: return "Not Found"
    case 405: return "Method Not Allowed"
    case 408: return "Request Timeout"
    case 411: return "Length Required"
    case 413: return "Content Too Large"
    case 415: return "Unsupported Media Type"
    case 431: return "Request Header Fields Too Large"
    case 500: return "Internal Server Error"
    case 501: return "Not Implemented"
    case 503: return "Service Unavailable"
    case 505: return "HTTP Version Not Supported"
    default: return "Status \(status)"
    }
}

/// Status line and header section; `framing` is `Content-Length: n` or `Transfer-Encoding: chunked` (or none, for
/// a body that ends when the connection closes).
func responseHead(status: Int, headers: [(name: String, value: String)], framing: String?, keepAlive: Bool)
    -> [UInt8]
{
    var text = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\nDate: \(httpDate())\r\n"
    for h in headers { text += "\(h.name): \(h.value)\r\n" }
    if let framing { text += framing + "\r\n" }
    text += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n"
    text += "Server: sanad\r\n\r\n"
    return Array(text.utf8)
}

/// `time` (now by default) as HTTP's IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT` (RFC 9110 §5.6.7).
func httpDate(_ time: time_t = Glibc.time(nil)) -> String {
    var seconds = time
    var parts = tm()
    gmtime_r(&seconds, &parts)
    let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
    return "\(days[Int(parts.tm_wday) % 7]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon) % 12]) "
        + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
}

/// One chunk of a chunked body (an empty `data` would end the body, so it gives no bytes).
func chunk(_ data: [UInt8]) -> [UInt8] {
    guard !data.isEmpty else { return [] }
    return Array((String(data.count, radix: 16) + "\r\n").utf8) + data + [13, 10]
}

/// The last chunk of a chunked body.
let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)

/// One server-sent event carrying `data` (each line of it as a `data:` field).
public func serverSentEvent(_ data: String) -> String {
    data.split(separator: "\n", omittingEmptySubsequences: false).map { "data: " + $0 }.joined(separator: "\n")
        + "\n\n"
}
