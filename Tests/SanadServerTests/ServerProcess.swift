import Foundation
import SanadCore
import SanadTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A response as the raw client read it.
struct RawReply {
    var status: Int
    var headers: [String: String]
    var body: String
    var json: JSONValue? { try? JSONValue.parse(body) }
}

/// A TCP connection to the server, byte by byte (so tests can send what no client library would).
final class RawConnection {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard ok else { throw ServerTestError("cannot connect to port \(port)") }
        var tv = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    private var closed = false

    /// Closes the connection now (a client that goes away); the descriptor is closed once only: closing it again
    /// after its number was reused would close another test's file (a pipe of a child process, say).
    func close() {
        guard !closed else { return }
        closed = true
        _ = Glibc.close(fd)
    }

    deinit { close() }

    func send(_ text: String) { send(Array(text.utf8)) }

    /// Shuts the sending side only (what `nc -N` does after its input): the server sees the end of the request
    /// stream, and the answer can still be read.
    func shutdownWrite() { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Up to `count` bytes as they arrive; empty at the end of the stream.
    func receive(_ count: Int = 65536) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? Array(buffer[0..<n]) : []
    }

    /// Everything until the server closes.
    func receiveAll() -> [UInt8] {
        var all: [UInt8] = []
        while true {
            let part = receive()
            if part.isEmpty { return all }
            all += part
        }
    }
}

/// Splits a raw response (chunked bodies put back together).
func parseReply(_ bytes: [UInt8]) throws -> RawReply {
    let crlf2: [UInt8] = [13, 10, 13, 10]
    guard let split = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<($0 + 4)]) == crlf2 }) else {
        throw ServerTestError("no head in \(String(decoding: bytes, as: UTF8.self).debugDescription)")
    }
    let lines = String(decoding: bytes[..<split], as: UTF8.self).components(separatedBy: "\r\n")
    let parts = lines[0].split(separator: " ")
    guard parts.count >= 2, let status = Int(parts[1]) else { throw ServerTestError("bad status line \(lines[0])") }
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    var body = Array(bytes[(split + 4)...])
    if headers["transfer-encoding"] == "chunked" {
        var rest = body[...]
        body = []
        while let lineEnd = rest.firstIndex(of: 13),
            let size = Int(String(decoding: rest[rest.startIndex..<lineEnd], as: UTF8.self), radix: 16), size > 0,
            lineEnd + 2 + size <= rest.endIndex
        {
            body += rest[(lineEnd + 2)..<(lineEnd + 2 + size)]
            rest = rest[min(rest.endIndex, lineEnd + 2 + size + 2)...]
        }
    }
    return RawReply(status: status, headers: headers, body: String(decoding: body, as: UTF8.self))
}

/// One request on a fresh connection (`Connection: close`), read to the end.
func request(
    _ port: Int, _ method: String, _ path: String, body: String? = nil, headers: [String] = []
) throws -> RawReply {
    let c = try RawConnection(port: port)
    var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
    for h in headers { head += h + "\r\n" }
    if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
    c.send(head + "\r\n" + (body ?? ""))
    return try parseReply(c.receiveAll())
}

/// The `data:` payloads of a server-sent event stream.
func events(_ body: String) -> [String] {
    body.components(separatedBy: "\n\n").compactMap { event in
        event.hasPrefix("data: ") ? String(event.dropFirst(6)) : nil
    }
}

/// A host config (`remote.json` in `dir`) whose only engine is the `openai` one with `options`: the 4gb tier's, no
/// plugins and no embedding model.
func writeRemoteConfig(in dir: URL, options: [String: JSONValue]) throws -> URL {
    let tier = TestPaths.packageRoot.appendingPathComponent("configs/tier-4gb.json")
    guard var config = try JSONValue.parse(String(contentsOf: tier, encoding: .utf8)).objectValue else {
        throw ServerTestError("\(tier.path) is not a JSON object")
    }
    config["tier"] = .string("remote")
    config["plugins"] = nil
    config["embedding"] = nil
    config["backends"] = .array([.object(["id": .string("openai"), "options": .object(options)])])
    let file = dir.appendingPathComponent("remote.json")
    try JSONValue.object(config).prettyString.write(to: file, atomically: true, encoding: .utf8)
    return file
}
