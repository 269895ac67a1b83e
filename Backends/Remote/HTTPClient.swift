import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One HTTP/1.1 exchange over a plain TCP socket (`http://` only), read incrementally: the status and headers, then
/// the body line by line (chunked transfer coding undone), so server-sent events arrive as they are written. Reads
/// wait in short slices and give up when `isCancelled()` turns true or `timeout` passes without a byte.
final class HTTPExchange {
    private(set) var status = 0
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var chunked = false
    private var chunkLeft = 0
    private var ended = false
    private let timeout: Double
    private let isCancelled: () -> Bool

    /// Connects to `url`'s host and port, sends `method path` with `body` (JSON), reads the head.
    init(
        url: URL, method: String, path: String, body: [UInt8], headers: [String], timeout: Double,
        isCancelled: @escaping () -> Bool
    ) throws {
        guard url.scheme == "http", let host = url.host else {
            throw RemoteError("\(url.absoluteString): only http:// URLs are supported (put a TLS proxy in front)")
        }
        self.timeout = timeout
        self.isCancelled = isCancelled
        fd = try connectTCP(host: host, port: url.port ?? 80)
        var head = "\(method) \(url.path.isEmpty ? "" : url.path)\(path) HTTP/1.1\r\nHost: \(host)\r\n"
        head += "Connection: close\r\nAccept: text/event-stream, application/json\r\n"
        head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
        for h in headers { head += h + "\r\n" }
        let request = Array((head + "\r\n").utf8) + body
        var offset = 0
        while offset < request.count {
            let n = request.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return send(fd, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard n > 0 else {
                close(fd)
                throw RemoteError("\(url.absoluteString): the connection closed while sending the request")
            }
            offset += n
        }
        var headText = ""
        while true {
            if let end = buffer.firstRange(of: [13, 10, 13, 10]) {
                headText = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                buffer.removeSubrange(..<end.upperBound)
                break
            }
            guard try fill() else {
                close(fd)
                throw RemoteError("\(url.absoluteString): the server closed the connection without an answer")
            }
        }
        let lines = headText.components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        status = statusParts.count >= 2 ? Int(statusParts[1]) ?? 0 : 0
        chunked = lines.dropFirst().contains {
            $0.lowercased().hasPrefix("transfer-encoding:") && $0.lowercased().contains("chunked")
        }
    }

    deinit { close(fd) }

    /// Reads more bytes into `buffer`; false at the end of the stream.
    private func fill() throws -> Bool {
        var waited = 0.0
        while true {
            if isCancelled() { throw CancellationError() }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 100) > 0 { break }
            waited += 0.1
            if waited > timeout { throw RemoteError("no answer from the server within \(Int(timeout)) s") }
        }
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return false }
        buffer += chunk[0..<n]
        return true
    }

    /// The next line of the body (without its line end), nil at the end.
    func nextLine() throws -> String? {
        var line: [UInt8] = []
        while true {
            guard let byte = try nextByte() else { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte == 10 { return String(decoding: line.last == 13 ? line.dropLast() : line[...], as: UTF8.self) }
            line.append(byte)
        }
    }

    /// The whole remaining body.
    func rest() throws -> [UInt8] {
        var out: [UInt8] = []
        while let b = try nextByte() { out.append(b) }
        return out
    }

    private func nextByte() throws -> UInt8? {
        if ended { return nil }
        if chunked && chunkLeft == 0 {
            // A chunk-size line; 0 ends the body.
            var sizeLine: [UInt8] = []
            while true {
                if buffer.isEmpty, try !fill() { return nil }
                let b = buffer.removeFirst()
                if b == 10 { break }
                if b != 13 { sizeLine.append(b) }
            }
            if sizeLine.isEmpty { return try nextByte() }  // the CRLF after a chunk's data
            let hex = String(decoding: sizeLine, as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(hex.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else {
                throw RemoteError("malformed chunked response")
            }
            if size == 0 {
                ended = true
                return nil
            }
            chunkLeft = size
        }
        if buffer.isEmpty, try !fill() { return nil }
        if chunked { chunkLeft -= 1 }
        return buffer.removeFirst()
    }
}

/// A connected TCP socket to `host:port`.
func connectTCP(host: String, port: Int) throws -> Int32 {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
        throw RemoteError("cannot resolve '\(host)'")
    }
    defer { freeaddrinfo(list) }
    var node: UnsafeMutablePointer<addrinfo>? = first
    var reason = "no address"
    while let info = node {
        node = info.pointee.ai_next
        let s = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
        guard s >= 0 else { continue }
        if connect(s, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return s }
        reason = String(cString: strerror(errno))
        close(s)
    }
    throw RemoteError("cannot connect to \(host):\(port): \(reason); is the server running?")
}

/// A remote engine failure worded for the user.
struct RemoteError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
