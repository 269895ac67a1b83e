import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A listening TCP socket (IPv4 or IPv6) bound to a host and port.
final class ListeningSocket: @unchecked Sendable {  // `fd` changes only in `close()`, under `lock`
    private(set) var fd: Int32
    /// The port actually bound (the kernel's choice when 0 was asked).
    let port: Int
    private let lock = NSLock()

    init(host: String, port: Int, backlog: Int32 = 128) throws {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw ServerError("cannot resolve '\(host)': \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let info = node {
            node = info.pointee.ai_next
            let s = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard s >= 0 else { continue }
            var one: Int32 = 1
            setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            if bind(s, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0, listen(s, backlog) == 0 {
                fd = s
                self.port = boundPort(s) ?? port
                return
            }
            lastError = String(cString: strerror(errno))
            Glibc.close(s)
        }
        throw ServerError("cannot listen on \(host):\(port): \(lastError)")
    }

    /// A connection, or nil when none arrived within `timeoutMilliseconds` (or the socket was closed).
    func accept(timeoutMilliseconds: Int32) -> Int32? {
        let current = lock.withLock { fd }
        guard current >= 0, waitReadable(current, timeoutMilliseconds: timeoutMilliseconds) else { return nil }
        let client = Glibc.accept(current, nil, nil)
        guard client >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return client
    }

    func close() {
        lock.withLock {
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }
}

/// The local port of a bound socket.
private func boundPort(_ fd: Int32) -> Int? {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let ok = withUnsafeMutablePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
    }
    guard ok else { return nil }
    switch Int32(storage.ss_family) {
    case AF_INET:
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    case AF_INET6:
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                Int(UInt16(bigEndian: $0.pointee.sin6_port))
            }
        }
    default: return nil
    }
}

/// Whether `fd` has bytes (or an end) to read within the timeout.
func waitReadable(_ fd: Int32, timeoutMilliseconds: Int32) -> Bool {
    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&p, 1, timeoutMilliseconds) > 0
}

/// Whether the connection is reset or closed both ways (checked without reading what the peer sent). A peer that
/// only shut its write side after sending its request (`nc -N`, some proxies) is not gone: it still reads the
/// answer. A peer that closed entirely looks the same until a write reaches it; the reset that write provokes makes
/// the next check (or write) see it gone.
func peerHasGone(_ fd: Int32) -> Bool {
    var p = pollfd(fd: fd, events: 0, revents: 0)
    guard poll(&p, 1, 0) > 0 else { return false }
    return p.revents & (Int16(POLLHUP) | Int16(POLLERR) | Int16(POLLNVAL)) != 0
}

/// Reads what is available into `buffer` (up to `maximum` bytes), waiting at most until `deadline`. Returns the
/// count read; 0 = the peer closed; nil = the deadline passed or an error.
func readSome(_ fd: Int32, into buffer: inout [UInt8], maximum: Int, deadline: ContinuousClock.Instant) -> Int? {
    let left = ContinuousClock.now.duration(to: deadline)
    let ms = max(
        0, Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
    guard ms > 0, waitReadable(fd, timeoutMilliseconds: ms) else { return nil }
    var chunk = [UInt8](repeating: 0, count: min(maximum, 64 << 10))
    let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    guard n >= 0 else { return nil }
    buffer.append(contentsOf: chunk[0..<n])
    return n
}

/// Writes all of `bytes`; false when the peer is gone (or a write timed out: SO_SNDTIMEO).
@discardableResult
func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { raw -> Int in
            guard let base = raw.baseAddress else { return 0 }
            return send(fd, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
        }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return false }
        offset += n
    }
    return true
}

/// Bounds a blocked write to a client that stopped reading.
func setSendTimeout(_ fd: Int32, seconds: Int) {
    var tv = timeval(tv_sec: seconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
}

/// A server-side failure worded for the user.
public struct ServerError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
