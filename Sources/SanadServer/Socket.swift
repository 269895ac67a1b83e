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

    init(host: String, port: Int, backlog: Int32 = 1024) throws {
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
                setNonBlocking(s)
                fd = s
                self.port = boundPort(s) ?? port
                return
            }
            lastError = String(cString: strerror(errno))
            Glibc.close(s)
        }
        throw ServerError("cannot listen on \(host):\(port): \(lastError)")
    }

    /// A waiting connection and its client's address, without blocking (nil when none waits).
    func acceptNow() -> (fd: Int32, client: String)? {
        let current = lock.withLock { fd }
        guard current >= 0 else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let client = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(current, $0, &length) }
        }
        guard client >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return (client, addressText(storage))
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

/// Whether the connection is reset or closed both ways (checked without reading what the peer sent). A peer that
/// only shut its write side after sending its request (`nc -N`, some proxies) is not gone: it still reads the
/// answer. A peer that closed entirely looks the same until a write reaches it; the reset that write provokes makes
/// the next check (or write) see it gone.
func peerHasGone(_ fd: Int32) -> Bool {
    var p = pollfd(fd: fd, events: 0, revents: 0)
    guard poll(&p, 1, 0) > 0 else { return false }
    return p.revents & (Int16(POLLHUP) | Int16(POLLERR) | Int16(POLLNVAL)) != 0
}

/// The numeric address (without the port) of a peer.
func addressText(_ storage: sockaddr_storage) -> String {
    var storage = storage
    var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
    let ok = withUnsafePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            getnameinfo(
                $0, socklen_t(MemoryLayout<sockaddr_storage>.size), &text, socklen_t(text.count), nil, 0,
                NI_NUMERICHOST) == 0
        }
    }
    return ok ? String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown"
}

/// Reads what is available now into `buffer` (at most 64 KiB) without waiting: the count read, 0 when the peer
/// closed (or the connection failed), -1 when nothing is there yet.
func readNow(_ fd: Int32, into buffer: inout [UInt8]) -> Int {
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
    if n < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -1 : 0 }
    buffer.append(contentsOf: chunk[0..<n])
    return n
}

/// Makes a descriptor's reads and accepts return at once when nothing waits.
func setNonBlocking(_ fd: Int32) {
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
}

/// Raises this process's open-file limit to its hard limit: each waiting connection holds a descriptor.
func raiseOpenFileLimit() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

/// Writes what the socket takes now, without waiting (the reader thread's short answers: a client that does not
/// read cannot hold it up); what does not fit is dropped, and the connection closes after it anyway.
func writeNow(_ fd: Int32, _ bytes: [UInt8]) {
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
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
