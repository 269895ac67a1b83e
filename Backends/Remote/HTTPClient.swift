import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The answer of one HTTP request, read incrementally: the status, then the body byte by byte (as it arrives, so
/// server-sent events stream).
protocol HTTPResponseStream: AnyObject {
    var status: Int { get }
    /// The next byte of the body; nil at its end.
    func nextByte() throws -> UInt8?
}

extension HTTPResponseStream {
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
}

/// Sends `method path` with a JSON `body` to `url` and returns the answer as it arrives: over a plain socket for
/// `http://`, through libcurl (TLS with certificate checks; `caFile` adds a CA bundle) for `https://`.
func openHTTPExchange(
    url: URL, method: String, path: String, body: [UInt8], headers: [String], timeout: Double, caFile: String?,
    isCancelled: @escaping () -> Bool
) throws -> any HTTPResponseStream {
    if url.scheme == "https" {
        return try CurlExchange(
            url: url, path: path, body: body, headers: headers, timeout: timeout, caFile: caFile,
            isCancelled: isCancelled)
    }
    return try SocketExchange(
        url: url, method: method, path: path, body: body, headers: headers, timeout: timeout, isCancelled: isCancelled)
}

/// Request headers both transports send.
private let commonHeaders = ["Accept: text/event-stream, application/json", "Content-Type: application/json"]

/// One HTTP/1.1 exchange over a plain TCP socket (`http://`), read incrementally: the status and headers, then the
/// body (chunked transfer coding undone), so server-sent events arrive as they are written. Reads wait in short
/// slices and give up when `isCancelled()` turns true or `timeout` passes without a byte.
final class SocketExchange: HTTPResponseStream {
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
            throw RemoteError("\(url.absoluteString): expected an http:// or https:// URL")
        }
        self.timeout = timeout
        self.isCancelled = isCancelled
        fd = try connectTCP(host: host, port: url.port ?? 80)
        var head = "\(method) \(url.path.isEmpty ? "" : url.path)\(path) HTTP/1.1\r\nHost: \(host)\r\n"
        head += "Connection: close\r\nContent-Length: \(body.count)\r\n"
        for h in commonHeaders + headers { head += h + "\r\n" }
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

    func nextByte() throws -> UInt8? {
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

/// One HTTPS POST through libcurl's multi interface, pumped as the body is read: the status once the first bytes
/// (or the end) arrive, then the body as it comes. TLS peer and host name are verified (libcurl's defaults; `caFile`
/// adds a CA bundle, for a private CA); the connection must open within `timeout`, and a read gives up when
/// `isCancelled()` turns true or `timeout` passes without a byte.
final class CurlExchange: HTTPResponseStream {
    /// What the write callback appends to (its address is the callback's user pointer).
    final class Received {
        var bytes: [UInt8] = []
    }

    private(set) var status = 0
    private let lib: LibCurl
    private let easy: LibCurl.Handle
    private let multi: LibCurl.Handle
    private var headerList: LibCurl.Handle?
    private let received = Received()
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: 256)
    private var buffer: [UInt8] = []
    private var position = 0
    private var finished = false
    private let url: String
    private let timeout: Double
    private let isCancelled: () -> Bool

    init(
        url: URL, path: String, body: [UInt8], headers: [String], timeout: Double, caFile: String?,
        isCancelled: @escaping () -> Bool
    ) throws {
        let lib: LibCurl
        switch LibCurl.shared {
        case .success(let loaded): lib = loaded
        case .failure(let error): throw RemoteError("\(url.absoluteString): https:// needs libcurl: \(error)")
        }
        guard let easy = lib.easyInit(), let multi = lib.multiInit() else {
            throw RemoteError("libcurl could not start a transfer (out of memory?)")
        }
        self.lib = lib
        self.easy = easy
        self.multi = multi
        self.url = url.absoluteString + path
        self.timeout = timeout
        self.isCancelled = isCancelled
        errorBuffer.initialize(repeating: 0, count: 256)
        for h in commonHeaders + headers { headerList = lib.listAppend(headerList, h) }
        let write: LibCurl.WriteCallback = { data, size, count, user in
            guard let data, let user else { return 0 }
            let received = Unmanaged<Received>.fromOpaque(user).takeUnretainedValue()
            received.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size * count))
            return size * count
        }
        var failed: Int32 = 0
        // libcurl copies the strings and (COPYPOSTFIELDS) the body; the header list and buffers live with self.
        failed |= lib.setPointer(easy, LibCurl.Option.url, self.url)
        failed |= lib.setLong(easy, LibCurl.Option.noSignal, 1)
        failed |= lib.setLong(easy, LibCurl.Option.post, 1)
        failed |= lib.setLong(easy, LibCurl.Option.postFieldSize, body.count)
        failed |= body.withUnsafeBytes { lib.setPointer(easy, LibCurl.Option.copyPostFields, $0.baseAddress) }
        failed |= lib.setPointer(easy, LibCurl.Option.httpHeader, UnsafeRawPointer(headerList))
        failed |= lib.setPointer(easy, LibCurl.Option.writeFunction, unsafeBitCast(write, to: UnsafeRawPointer.self))
        failed |= lib.setPointer(
            easy, LibCurl.Option.writeData, UnsafeRawPointer(Unmanaged.passUnretained(received).toOpaque()))
        failed |= lib.setPointer(easy, LibCurl.Option.errorBuffer, errorBuffer)
        failed |= lib.setLong(easy, LibCurl.Option.connectTimeout, max(1, Int(timeout)))
        failed |= lib.setLong(easy, LibCurl.Option.verifyPeer, 1)
        failed |= lib.setLong(easy, LibCurl.Option.verifyHost, 2)
        if let caFile { failed |= lib.setPointer(easy, LibCurl.Option.caInfo, caFile) }
        guard failed == 0, lib.multiAdd(multi, easy) == 0 else {
            throw RemoteError("\(self.url): libcurl refused the request's options (\(lib.version))")
        }
        // The head: wait for the first body bytes or the end, then read the status.
        while buffer.isEmpty && !finished { try pump() }
        var code = 0
        _ = lib.getLong(easy, LibCurl.responseCode, &code)
        status = code
    }

    deinit {
        _ = lib.multiRemove(multi, easy)
        lib.easyCleanup(easy)
        _ = lib.multiCleanup(multi)
        lib.listFree(headerList)
        errorBuffer.deallocate()
    }

    func nextByte() throws -> UInt8? {
        while position == buffer.count {
            if finished { return nil }
            try pump()
        }
        defer { position += 1 }
        return buffer[position]
    }

    /// Runs the transfer until new body bytes arrive or it ends; throws the transfer's error, a cancellation or a
    /// timeout.
    private func pump() throws {
        let start = Date()
        while true {
            if isCancelled() { throw CancellationError() }
            var running: Int32 = 0
            _ = lib.multiPerform(multi, &running)
            if !received.bytes.isEmpty {
                buffer = Array(buffer[position...]) + received.bytes
                position = 0
                received.bytes.removeAll(keepingCapacity: true)
                return
            }
            if running == 0 {
                finished = true
                var left: Int32 = 0
                while let message = lib.multiInfoRead(multi, &left) {
                    let result = message.load(fromByteOffset: 16, as: Int32.self)
                    guard message.load(as: Int32.self) == 1, result != 0 else { continue }
                    let detail = String(cString: errorBuffer)
                    let text = detail.isEmpty ? lib.errorString(result).map { String(cString: $0) } ?? "" : detail
                    throw RemoteError("\(url): \(text) (libcurl error \(result))")
                }
                return
            }
            _ = lib.multiPoll(multi, nil, 0, 100, nil)
            if Date().timeIntervalSince(start) > timeout {
                throw RemoteError("no answer from the server within \(Int(timeout)) s")
            }
        }
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
