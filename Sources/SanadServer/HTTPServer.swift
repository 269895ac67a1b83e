import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A request with its body.
public struct HTTPRequest: Sendable {
    public var head: HTTPRequestHead
    public var body: [UInt8]
}

/// Timeouts and limits of the server.
public struct HTTPServerOptions: Sendable {
    public var limits = HTTPLimits()
    /// Seconds a client has to send a whole request head once it starts (and a body once the head is in); a client
    /// slower than that is dropped.
    public var readTimeout: Double = 10
    /// Seconds a kept-alive connection may sit idle between requests.
    public var idleTimeout: Double = 30
    /// Connections served at once; more are answered 503 and closed.
    public var maximumConnections = 256
    /// Seconds shutdown waits for requests in progress before cancelling them.
    public var shutdownGrace: Double = 10

    public init() {}
}

/// The handler's side of one connection: answers the request, streams a body, notices the client leaving.
public final class ResponseChannel: @unchecked Sendable {  // used by one request at a time: `sent` and `streaming` are
    // written only by the thread or task serving it, which the connection thread waits on; `failed` is behind a lock
    let fd: Int32
    let keepAlive: Bool
    private(set) var sent = false
    private var streaming = false
    private var chunked = false
    /// A write failed (the client is gone); read by the connection thread while a task writes.
    private var failed: Bool {
        get { failedLock.withLock { failedFlag } }
        set { failedLock.withLock { failedFlag = newValue } }
    }
    private var failedFlag = false
    private let failedLock = NSLock()
    /// A streamed body on HTTP/1.0 ends when the connection closes.
    private var closeDelimited = false
    fileprivate let server: HTTPServer

    fileprivate init(fd: Int32, keepAlive: Bool, minorVersion: Int, server: HTTPServer) {
        self.fd = fd
        self.keepAlive = keepAlive
        self.chunked = minorVersion >= 1
        self.server = server
    }

    /// Sends a complete response.
    public func send(_ response: HTTPResponse) {
        guard !sent else { return }
        sent = true
        let head = responseHead(
            status: response.status, headers: response.headers, framing: "Content-Length: \(response.body.count)",
            keepAlive: keepAlive)
        failed = !writeAll(fd, head + response.body)
    }

    /// Starts a streamed response (chunked on HTTP/1.1, ended by closing on HTTP/1.0).
    public func startStream(status: Int, headers: [(name: String, value: String)]) {
        guard !sent else { return }
        sent = true
        streaming = true
        closeDelimited = !chunked
        let head = responseHead(
            status: status, headers: headers, framing: chunked ? "Transfer-Encoding: chunked" : nil,
            keepAlive: keepAlive && chunked)
        failed = !writeAll(fd, head)
    }

    /// Writes part of a streamed body; false when the client is gone.
    @discardableResult
    public func write(_ text: String) -> Bool {
        guard streaming, !failed else { return false }
        let bytes = Array(text.utf8)
        failed = !writeAll(fd, chunked ? chunk(bytes) : bytes)
        return !failed
    }

    /// Ends a streamed body.
    public func endStream() {
        guard streaming, !failed else { return }
        if chunked { failed = !writeAll(fd, lastChunk) }
        streaming = false
    }

    /// Whether the connection can serve another request after this one.
    var reusable: Bool { keepAlive && !failed && !closeDelimited }

    /// Whether the client has gone: a write to it failed or the connection was reset. A client that only shut
    /// its sending side (`nc -N`) is still there and gets its answer.
    public var clientGone: Bool { failed || peerHasGone(fd) }

    /// Runs `operation` in a task and waits for it, cancelling it when the client disconnects or the server's
    /// shutdown grace runs out: generation stops within a token (the generation loop polls its cancellation).
    /// Nil only if the task ended without a result.
    public func runCancellable<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T? {
        let result = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        let task = Task {
            result.set(await operation())
            done.signal()
        }
        let id = server.register { task.cancel() }
        defer { server.unregister(id) }
        while done.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
            if clientGone { task.cancel() }
        }
        return result.value
    }
}

/// A value handed from a task to the thread waiting for it.
private final class ResultBox<T: Sendable>: @unchecked Sendable {  // `stored` is guarded by `lock`
    private let lock = NSLock()
    private var stored: T?
    func set(_ v: T) { lock.withLock { stored = v } }
    var value: T? { lock.withLock { stored } }
}

/// An HTTP/1.1 server: one thread per connection (blocking sockets with poll timeouts), requests handed to
/// `handler` on that thread. `run()` serves until `shutdown()`.
public final class HTTPServer: @unchecked Sendable {  // mutable state (`stopping`, `connections`, `cancellers`) is
    // guarded by `lock`
    public typealias Handler = @Sendable (HTTPRequest, ResponseChannel) -> Void

    public let options: HTTPServerOptions
    private let socket: ListeningSocket
    private let handler: Handler
    private let lock = NSLock()
    private var stopping = false
    private var connections = 0
    private var cancellers: [Int: @Sendable () -> Void] = [:]
    private var nextID = 0

    /// The port bound (the kernel's choice when 0 was asked).
    public var port: Int { socket.port }

    /// Binds `host:port` at once (so the port is known before `run`).
    public init(host: String, port: Int, options: HTTPServerOptions, handler: @escaping Handler) throws {
        self.options = options
        self.handler = handler
        self.socket = try ListeningSocket(host: host, port: port)
    }

    private var isStopping: Bool { lock.withLock { stopping } }

    /// Stops accepting; requests in progress get `options.shutdownGrace` seconds, then are cancelled.
    public func shutdown() {
        lock.withLock { stopping = true }
    }

    /// Serves until `shutdown()` (or cancellation of the calling task) and every connection has closed.
    public func run() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let thread = Thread { [self] in
                    acceptLoop()
                    done.resume()
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
        } onCancel: {
            shutdown()
        }
    }

    private func acceptLoop() {
        while !isStopping {
            guard let fd = socket.accept(timeoutMilliseconds: 200) else { continue }
            let admitted = lock.withLock {
                guard connections < options.maximumConnections else { return false }
                connections += 1
                return true
            }
            guard admitted else {
                writeAll(fd, overloaded())
                close(fd)
                continue
            }
            let thread = Thread { [self] in
                serveConnection(fd)
                close(fd)
                lock.withLock { connections -= 1 }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        socket.close()
        let graceEnd = ContinuousClock.now + .milliseconds(Int(options.shutdownGrace * 1000))
        while lock.withLock({ connections }) > 0 {
            if ContinuousClock.now > graceEnd {
                for cancel in lock.withLock({ Array(cancellers.values) }) { cancel() }
            }
            usleep(50_000)
        }
    }

    private func overloaded() -> [UInt8] {
        let body = Array(openAIErrorJSON("too many connections; retry shortly", type: "server_error").utf8)
        return responseHead(
            status: 503, headers: [("Content-Type", "application/json"), ("Retry-After", "1")],
            framing: "Content-Length: \(body.count)", keepAlive: false) + body
    }

    fileprivate func register(_ cancel: @escaping @Sendable () -> Void) -> Int {
        lock.withLock {
            nextID += 1
            cancellers[nextID] = cancel
            return nextID
        }
    }

    fileprivate func unregister(_ id: Int) {
        _ = lock.withLock { cancellers.removeValue(forKey: id) }
    }

    /// Reads requests from `fd` and answers them until the client closes, a limit or timeout is hit, or the
    /// server stops.
    private func serveConnection(_ fd: Int32) {
        setSendTimeout(fd, seconds: 30)
        var buffer: [UInt8] = []
        var first = true
        while true {
            // Between requests: wait for the first byte (idle timeout), checking for shutdown.
            if buffer.isEmpty {
                let wait = first ? options.readTimeout : options.idleTimeout
                let end = ContinuousClock.now + .milliseconds(Int(wait * 1000))
                while !waitReadable(fd, timeoutMilliseconds: 200) {
                    if isStopping || ContinuousClock.now > end { return }
                }
            }
            first = false
            let readEnd = ContinuousClock.now + .milliseconds(Int(options.readTimeout * 1000))
            let head: HTTPRequestHead
            let headerBytes: Int
            readHead: while true {
                switch parseRequestHead(buffer, limits: options.limits) {
                case .complete(let h, let n):
                    head = h
                    headerBytes = n
                    break readHead
                case .failure(let error):
                    refuse(fd, error)
                    return
                case .incomplete:
                    guard let n = readSome(fd, into: &buffer, maximum: 64 << 10, deadline: readEnd), n > 0 else {
                        if !buffer.isEmpty {
                            refuse(fd, HTTPParseError(408, "the request head did not arrive in time"))
                        }
                        return
                    }
                }
            }
            let length: Int
            switch requestBodyLength(head, limits: options.limits) {
            case .success(let n): length = n
            case .failure(let error):
                refuse(fd, error)
                return
            }
            buffer.removeFirst(headerBytes)
            // curl and others wait a moment for this before sending a large body (RFC 9110 §10.1.1).
            if buffer.count < length, head.minorVersion >= 1, head.header("expect")?.lowercased() == "100-continue" {
                writeAll(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
            }
            while buffer.count < length {
                guard let n = readSome(fd, into: &buffer, maximum: length - buffer.count, deadline: readEnd), n > 0
                else {
                    refuse(fd, HTTPParseError(408, "the request body did not arrive in time"))
                    return
                }
            }
            let body = Array(buffer.prefix(length))
            buffer.removeFirst(length)
            let keepAlive = head.keepAlive && !isStopping
            let channel = ResponseChannel(fd: fd, keepAlive: keepAlive, minorVersion: head.minorVersion, server: self)
            handler(HTTPRequest(head: head, body: body), channel)
            if !channel.sent {
                channel.send(.json(500, openAIErrorJSON("the handler sent no response", type: "server_error")))
            }
            guard channel.reusable else { return }
        }
    }

    /// Answers a request that cannot be read, and the connection closes.
    private func refuse(_ fd: Int32, _ error: HTTPParseError) {
        let body = Array(
            openAIErrorJSON(
                error.message, type: "invalid_request_error", code: error.status == 408 ? "timeout" : nil
            ).utf8)
        writeAll(
            fd,
            responseHead(
                status: error.status, headers: [("Content-Type", "application/json")],
                framing: "Content-Length: \(body.count)", keepAlive: false) + body)
        lingeringClose(fd)
    }
}

/// Ends our side and reads (and drops) what the client still sends, for a moment: closing with unread bytes would
/// reset the connection and the client could lose the answer it has not read yet.
func lingeringClose(_ fd: Int32) {
    shutdown(fd, Int32(SHUT_WR))
    let end = ContinuousClock.now + .seconds(1)
    var sink: [UInt8] = []
    var total = 0
    while total < 8 << 20, let n = readSome(fd, into: &sink, maximum: 64 << 10, deadline: end), n > 0 {
        total += n
        sink.removeAll(keepingCapacity: true)
    }
}
