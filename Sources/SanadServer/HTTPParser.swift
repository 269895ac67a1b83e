import Foundation

/// HTTP/1.1 request parsing (RFC 9112) as small free functions over bytes: no I/O, no state, every input bounded, so
/// hostile bytes are tested directly (Tests/SanadServerTests).

/// Size limits a request must stay within.
public struct HTTPLimits: Sendable, Equatable {
    /// Request line plus headers, with their line ends (431 beyond).
    public var maximumHeaderBytes: Int
    /// Header fields (431 beyond).
    public var maximumHeaderCount: Int
    /// Body bytes (413 beyond).
    public var maximumBodyBytes: Int

    public init(maximumHeaderBytes: Int = 16 << 10, maximumHeaderCount: Int = 100, maximumBodyBytes: Int = 4 << 20) {
        self.maximumHeaderBytes = maximumHeaderBytes
        self.maximumHeaderCount = maximumHeaderCount
        self.maximumBodyBytes = maximumBodyBytes
    }
}

/// A parsed request line and header section.
public struct HTTPRequestHead: Sendable, Equatable {
    public var method: String
    /// The request target as sent (`/v1/models?x=1`).
    public var target: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// Header fields in order, names lower-cased.
    public var headers: [(name: String, value: String)]

    public static func == (a: HTTPRequestHead, b: HTTPRequestHead) -> Bool {
        a.method == b.method && a.target == b.target && a.minorVersion == b.minorVersion
            && a.headers.elementsEqual(b.headers) { $0.name == $1.name && $0.value == $1.value }
    }

    /// The first value of header `name` (lower-case).
    public func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }

    /// The path without the query.
    public var path: String { String(target.prefix { $0 != "?" }) }

    /// Whether the connection stays open after this request (HTTP/1.1 unless `close`, HTTP/1.0 only with
    /// `keep-alive`).
    public var keepAlive: Bool {
        let tokens = (header("connection") ?? "").lowercased().split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        return minorVersion >= 1 ? !tokens.contains("close") : tokens.contains("keep-alive")
    }
}

/// Why a request was refused, as the status to answer with.
public struct HTTPParseError: Error, Sendable, Equatable {
    public var status: Int
    public var message: String
    /// The error body's `code` (nil: `timeout` for a 408, else none).
    public var code: String?

    public init(_ status: Int, _ message: String, code: String? = nil) {
        self.status = status
        self.message = message
        self.code = code
    }
}

/// The outcome of looking at the bytes received so far.
public enum HTTPHeadParse: Sendable, Equatable {
    /// More bytes are needed (and may still arrive within the limits).
    case incomplete
    /// A head, and how many bytes it took (the body starts there).
    case complete(HTTPRequestHead, headerBytes: Int)
    case failure(HTTPParseError)
}

/// Parses the head at the start of `bytes`. Lines end in CRLF (a bare LF is accepted, RFC 9112 §2.2); empty lines
/// before the request line are skipped, and count against the head's size limit.
public func parseRequestHead(_ bytes: [UInt8], limits: HTTPLimits) -> HTTPHeadParse {
    var start = 0
    while start + 1 < bytes.count, bytes[start] == 13, bytes[start + 1] == 10 { start += 2 }
    while start < bytes.count, bytes[start] == 10 { start += 1 }
    guard let end = headEnd(bytes, from: start, limit: max(0, limits.maximumHeaderBytes - start)) else {
        if bytes.count > limits.maximumHeaderBytes {
            return .failure(
                HTTPParseError(431, "the request header section exceeds \(limits.maximumHeaderBytes) bytes"))
        }
        return .incomplete
    }
    var lines = splitLines(bytes[start..<end.headerEnd])
    guard !lines.isEmpty else { return .failure(HTTPParseError(400, "empty request")) }
    let requestLine = lines.removeFirst()
    guard lines.count <= limits.maximumHeaderCount else {
        return .failure(HTTPParseError(431, "more than \(limits.maximumHeaderCount) header fields"))
    }
    do {
        var head = try parseRequestLine(requestLine)
        head.headers = try lines.map(parseHeaderField)
        return .complete(head, headerBytes: end.bodyStart)
    } catch let error as HTTPParseError {
        return .failure(error)
    } catch {
        return .failure(HTTPParseError(400, "malformed request"))
    }
}

/// Where the empty line that ends the head is: the end of the last header line and where the body begins. Nil
/// when it is not within `limit` bytes of `start`.
func headEnd(_ bytes: [UInt8], from start: Int, limit: Int) -> (headerEnd: Int, bodyStart: Int)? {
    let stop = min(bytes.count, start + limit + 4)
    var i = start
    while i < stop {
        if bytes[i] == 10 {
            if i + 1 < bytes.count, bytes[i + 1] == 10 { return (i, i + 2) }
            if i + 2 < bytes.count, bytes[i + 1] == 13, bytes[i + 2] == 10 { return (i, i + 3) }
        }
        i += 1
    }
    return nil
}

/// The lines of a head, without their CR LF.
func splitLines(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
    bytes.split(separator: 10, omittingEmptySubsequences: false).map { $0.last == 13 ? $0.dropLast() : $0 }
}

/// `METHOD SP request-target SP HTTP/1.x`.
func parseRequestLine(_ line: ArraySlice<UInt8>) throws -> HTTPRequestHead {
    let parts = line.split(separator: 32, omittingEmptySubsequences: false)
    guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
        throw HTTPParseError(400, "malformed request line")
    }
    guard parts[0].allSatisfy(isTokenByte) else { throw HTTPParseError(400, "malformed method") }
    guard parts[1].allSatisfy({ $0 > 32 && $0 < 127 }) else { throw HTTPParseError(400, "malformed request target") }
    let version = Array(parts[2])
    guard version.count == 8, version.starts(with: Array("HTTP/1.".utf8)), version[7] == 48 || version[7] == 49
    else {
        if version.starts(with: Array("HTTP/".utf8)) { throw HTTPParseError(505, "only HTTP/1.0 and HTTP/1.1") }
        throw HTTPParseError(400, "malformed HTTP version")
    }
    return HTTPRequestHead(
        method: String(decoding: parts[0], as: UTF8.self), target: String(decoding: parts[1], as: UTF8.self),
        minorVersion: Int(version[7] - 48), headers: [])
}

/// `name: value` with optional whitespace around the value; obsolete line folding is refused (RFC 9112 §5.2).
func parseHeaderField(_ line: ArraySlice<UInt8>) throws -> (name: String, value: String) {
    guard let colon = line.firstIndex(of: 58), colon > line.startIndex else {
        throw HTTPParseError(400, "malformed header field")
    }
    let name = line[line.startIndex..<colon]
    guard name.allSatisfy(isTokenByte) else { throw HTTPParseError(400, "malformed header field name") }
    var value = line[(colon + 1)...]
    while let f = value.first, f == 32 || f == 9 { value = value.dropFirst() }
    while let l = value.last, l == 32 || l == 9 { value = value.dropLast() }
    guard value.allSatisfy({ $0 == 9 || ($0 >= 32 && $0 != 127) }) else {
        throw HTTPParseError(400, "control character in header field '\(String(decoding: name, as: UTF8.self))'")
    }
    return (String(decoding: name, as: UTF8.self).lowercased(), String(decoding: value, as: UTF8.self))
}

/// RFC 9110 `tchar`.
func isTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case 48...57, 65...90, 97...122: return true
    default: return Array("!#$%&'*+-.^_`|~".utf8).contains(b)
    }
}

/// The body length a head announces: 0 without one, an error for a chunked request body (not accepted), a
/// malformed or conflicting Content-Length, or one above the limit.
public func requestBodyLength(_ head: HTTPRequestHead, limits: HTTPLimits) -> Result<Int, HTTPParseError> {
    if head.header("transfer-encoding") != nil {
        return .failure(HTTPParseError(411, "chunked request bodies are not accepted; send Content-Length"))
    }
    let values = head.headers.filter { $0.name == "content-length" }.flatMap {
        $0.value.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
    }
    guard let first = values.first else { return .success(0) }
    guard values.allSatisfy({ $0 == first }), !first.isEmpty, first.count <= 18,
        first.utf8.allSatisfy({
            $0 >= 48 && $0 <= 57
        }), let length = Int(first)
    else { return .failure(HTTPParseError(400, "malformed Content-Length")) }
    guard length <= limits.maximumBodyBytes else {
        return .failure(HTTPParseError(413, "the request body exceeds \(limits.maximumBodyBytes) bytes"))
    }
    return .success(length)
}
