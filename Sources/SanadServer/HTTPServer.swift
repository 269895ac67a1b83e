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
    /// Seconds a client has to send a whole request (head and body): from the connection's accept for its first
    /// request, from the first byte for later ones; a client slower than that is answered 408 and dropped.
    public var readTimeout: Double = 10
    /// Seconds a kept-alive connection may sit idle between requests.
    public var idleTimeout: Double = 30
    /// Requests handled at once (a thread each); more are answered 503 and closed. Connections waiting for or
    /// sending a request take no thread.
    public var maximumConnections = 256
    /// Connections open at once, waiting, arriving or served; more are answered 503 and closed.
    public var maximumOpenConnections = 4096
    /// Connections open at once from one client address; more are answered 503 and closed.
    public var maximumConnectionsPerClient = 512
    /// Request body bytes held at once by all requests (reserved when a head announces them, at least one
    /// `limits.maximumBodyBytes`); a request past it is answered 503 at its head.
    public var maximumBodyMemory = 64 << 20
    /// Checked once a request's head is in, before its body is read or a thread is taken: a refusal is answered
    /// and the connection closed (an API key, the Host).
    public var admit: (@Sendable (HTTPRequestHead) -> HTTPParseError?)?
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
    /// A `HEAD` request: responses go without their body (their `Content-Length` still says its size).
    let headOnly: Bool
    /// Headers added to whatever response goes out (the CORS headers of an allowed origin).
    public var extraHeaders: [(name: String, value: String)] = []

    fileprivate init(fd: Int32, keepAlive: Bool, minorVersion: Int, headOnly: Bool, server: HTTPServer) {
        self.fd = fd
        self.keepAlive = keepAlive
        self.chunked = minorVersion >= 1
        self.headOnly = headOnly
        self.server = server
    }

    /// Sends a complete response (a 204 without any body framing, as RFC 9110 asks).
    public func send(_ response: HTTPResponse) {
        guard !sent else { return }
        sent = true
        let head = responseHead(
            status: response.status, headers: response.headers + extraHeaders,
            framing: response.status == 204 ? nil : "Content-Length: \(response.body.count)", keepAlive: keepAlive)
        failed = !writeAll(fd, headOnly || response.status == 204 ? head : head + response.body)
    }

    /// Starts a streamed response (chunked on HTTP/1.1, ended by closing on HTTP/1.0).
    public func startStream(status: Int, headers: [(name: String, value: String)]) {
        guard !sent else { return }
        sent = true
        streaming = true
        closeDelimited = !chunked
        let head = responseHead(
            status: status, headers: headers + extraHeaders, framing: chunked ? "Transfer-Encoding: chunked" : nil,
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

/// An HTTP/1.1 server. One reader thread watches the listening socket and every connection that is waiting for or
/// receiving a request (`poll`, no thread each), under a head deadline and per-client, total and body-memory
/// limits; a request that has fully arrived is handed to `handler` on a thread of its own, and a kept-alive
/// connection goes back to the reader afterwards. `run()` serves until `shutdown()`.
public final class HTTPServer: @unchecked Sendable {  // mutable state (`stopping`, `serving`, `returned`,
    // `cancellers`, `bodyBytes`) is guarded by `lock`; `pending` and `perClient` belong to the reader thread
    public typealias Handler = @Sendable (HTTPRequest, ResponseChannel) -> Void

    public let options: HTTPServerOptions
    private let socket: ListeningSocket
    private let handler: Handler
    private let lock = NSLock()
    private var stopping = false
    /// Requests being handled (a thread each).
    private var serving = 0
    /// Body bytes held by requests read or being read, against `options.maximumBodyMemory`.
    private var bodyBytes = 0
    /// Kept-alive connections handed back by request threads, for the reader to watch again.
    private var returned: [PendingConnection] = []
    private var cancellers: [Int: @Sendable () -> Void] = [:]
    private var nextID = 0
    private var pending: [Int32: PendingConnection] = [:]
    /// Open connections by client address (waiting, reading or being served).
    private var perClient: [String: Int] = [:]
    private var openConnections = 0
    /// A pipe a request thread writes a byte to when it hands a connection back, so the reader's poll wakes at once
    /// (a kept-alive client's next request is not kept waiting for the poll timeout).
    private let wake: (read: Int32, write: Int32)

    /// The port bound (the kernel's choice when 0 was asked).
    public var port: Int { socket.port }

    /// Binds `host:port` at once (so the port is known before `run`).
    public init(host: String, port: Int, options: HTTPServerOptions, handler: @escaping Handler) throws {
        self.options = options
        self.handler = handler
        self.socket = try ListeningSocket(host: host, port: port)
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw ServerError("cannot make a pipe: \(String(cString: strerror(errno)))") }
        setNonBlocking(ends[0])
        setNonBlocking(ends[1])
        wake = (ends[0], ends[1])
        raiseOpenFileLimit()
    }

    deinit {
        close(wake.read)
        close(wake.write)
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
                    readLoop()
                    done.resume()
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
        } onCancel: {
            shutdown()
        }
    }

    /// The reader: accepts, reads heads and bodies of every waiting connection, hands complete requests to
    /// threads; after `shutdown()` closes what waits and gives requests in progress their grace.
    private func readLoop() {
        while !isStopping {
            for connection in takeReturned() {
                if connection.closeWhenReturned { finish(connection) } else { watch(connection) }
            }
            var fds = [socket.fd, wake.read].map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            fds += pending.keys.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), 100) >= 0 || errno == EINTR else { break }
            if fds[0].revents != 0 { acceptWaiting() }
            if fds[1].revents != 0 {
                var sink = [UInt8](repeating: 0, count: 256)
                while read(wake.read, &sink, sink.count) > 0 {}
            }
            for p in fds.dropFirst(2) where p.revents != 0 {
                if let connection = pending[p.fd] { receive(connection) }
            }
            expire()
        }
        socket.close()
        for connection in Array(pending.values) { finish(connection) }
        let graceEnd = ContinuousClock.now + .milliseconds(Int(options.shutdownGrace * 1000))
        while lock.withLock({ serving }) > 0 {
            if ContinuousClock.now > graceEnd {
                for cancel in lock.withLock({ Array(cancellers.values) }) { cancel() }
            }
            for connection in takeReturned() { finish(connection) }
            usleep(50_000)
        }
        for connection in takeReturned() { finish(connection) }
    }

    /// The connections request threads handed back since the last call.
    private func takeReturned() -> [PendingConnection] {
        lock.withLock {
            defer { returned = [] }
            return returned
        }
    }

    /// Watches a kept-alive connection again, and serves what it already sent (a pipelined request).
    private func watch(_ connection: PendingConnection) {
        pending[connection.fd] = connection
        advance(connection)
    }

    /// Accepts what is waiting; a connection past the total or its client's limit is answered 503 and closed.
    private func acceptWaiting() {
        for _ in 0..<64 {
            guard let (fd, client) = socket.acceptNow() else { return }
            guard openConnections < options.maximumOpenConnections,
                perClient[client, default: 0] < options.maximumConnectionsPerClient
            else {
                let whose = openConnections < options.maximumOpenConnections ? " from \(client)" : ""
                writeNow(fd, overloaded("too many connections\(whose); retry shortly"))
                close(fd)
                continue
            }
            openConnections += 1
            perClient[client, default: 0] += 1
            setSendTimeout(fd, seconds: 30)
            let connection = PendingConnection(
                fd: fd, client: client, deadline: deadline(options.readTimeout), firstRequest: true)
            pending[fd] = connection
        }
    }

    private func deadline(_ seconds: Double) -> ContinuousClock.Instant {
        .now + .milliseconds(Int(seconds * 1000))
    }

    /// Reads what `connection` sent and goes on with its request; the end of its stream closes it (a request
    /// already complete in its buffer is still served).
    private func receive(_ connection: PendingConnection) {
        if connection.draining {
            var sink: [UInt8] = []
            if readNow(connection.fd, into: &sink) == 0 { finish(connection) }
            return
        }
        let n = readNow(connection.fd, into: &connection.buffer)
        if n < 0 { return }
        if n == 0 {
            advance(connection)
            if pending[connection.fd] === connection, !connection.draining { finish(connection) }
            return
        }
        advance(connection)
    }

    /// The first byte of a request starts its deadline (a first request's runs from the connection's accept).
    private func markStarted(_ connection: PendingConnection) {
        guard !connection.started, !connection.buffer.isEmpty else { return }
        connection.started = true
        if !connection.firstRequest { connection.deadline = deadline(options.readTimeout) }
    }

    /// Parses as far as the buffer goes: refuses a bad head, checks the key, reserves the body's memory, and hands
    /// a complete request to a thread.
    private func advance(_ connection: PendingConnection) {
        if connection.head == nil {
            switch parseRequestHead(connection.buffer, limits: options.limits) {
            case .incomplete:
                markStarted(connection)
                return
            case .failure(let error): return refuse(connection, error)
            case .complete(let head, let headerBytes):
                switch requestBodyLength(head, limits: options.limits) {
                case .failure(let error): return refuse(connection, error)
                case .success(let length):
                    if let refusal = options.admit?(head) { return refuse(connection, refusal) }
                    guard reserveBody(length) else {
                        return refuse(
                            connection,
                            HTTPParseError(
                                503,
                                "request bodies waiting here already hold \(options.maximumBodyMemory >> 20) MiB; "
                                    + "retry shortly"))
                    }
                    connection.reserved = length
                    connection.head = (head, headerBytes, length)
                    connection.buffer.removeFirst(headerBytes)
                    connection.buffer.reserveCapacity(length)
                    if connection.buffer.count < length, head.minorVersion >= 1,
                        head.header("expect")?.lowercased() == "100-continue"
                    {
                        writeNow(connection.fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                    }
                }
            }
        }
        guard let (head, _, length) = connection.head, connection.buffer.count >= length else { return }
        let body = Array(connection.buffer.prefix(length))
        connection.buffer.removeFirst(length)
        connection.head = nil
        pending[connection.fd] = nil
        dispatch(connection, HTTPRequest(head: head, body: body))
    }

    /// Serves `request` on a thread of its own (503 when `maximumConnections` are being served).
    private func dispatch(_ connection: PendingConnection, _ request: HTTPRequest) {
        let admitted = lock.withLock {
            guard serving < options.maximumConnections else { return false }
            serving += 1
            return true
        }
        guard admitted else {
            releaseBody(connection)
            writeNow(connection.fd, overloaded("too many requests in progress; retry shortly"))
            return finish(connection)
        }
        let thread = Thread { [self] in
            let channel = serve(connection, request)
            releaseBody(connection)
            lock.withLock {
                serving -= 1
                connection.closeWhenReturned = !channel.reusable || stopping
                connection.started = false
                connection.firstRequest = false
                connection.deadline = deadline(options.idleTimeout)
                returned.append(connection)
            }
            var one: UInt8 = 1
            _ = write(wake.write, &one, 1)
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Runs the handler (a 500 when it sent nothing).
    private func serve(_ connection: PendingConnection, _ request: HTTPRequest) -> ResponseChannel {
        let keepAlive = request.head.keepAlive && !isStopping
        let channel = ResponseChannel(
            fd: connection.fd, keepAlive: keepAlive, minorVersion: request.head.minorVersion,
            headOnly: request.head.method == "HEAD", server: self)
        handler(request, channel)
        if !channel.sent {
            channel.send(.json(500, openAIErrorJSON("the handler sent no response", type: "server_error")))
        }
        return channel
    }

    /// Closes connections past their deadline: 408 for a request that had begun, silence for an idle one.
    private func expire() {
        let now = ContinuousClock.now
        for connection in Array(pending.values) where connection.closeWhenReturned || now > connection.deadline {
            if connection.closeWhenReturned || connection.draining || !connection.started {
                finish(connection)
            } else {
                let what = connection.head == nil ? "head" : "body"
                refuse(connection, HTTPParseError(408, "the request \(what) did not arrive in time"))
            }
        }
    }

    private func reserveBody(_ length: Int) -> Bool {
        lock.withLock {
            guard bodyBytes + length <= max(options.maximumBodyMemory, options.limits.maximumBodyBytes) else {
                return false
            }
            bodyBytes += length
            return true
        }
    }

    private func releaseBody(_ connection: PendingConnection) {
        lock.withLock { bodyBytes -= connection.reserved }
        connection.reserved = 0
    }

    /// Answers a request that cannot be read; the connection then drains for a moment before it closes (closing
    /// with unread bytes would reset it and the client could lose the answer).
    private func refuse(_ connection: PendingConnection, _ error: HTTPParseError) {
        releaseBody(connection)
        let body = Array(
            openAIErrorJSON(
                error.message, type: error.status == 503 ? "server_error" : "invalid_request_error",
                code: error.code ?? (error.status == 408 ? "timeout" : nil)
            ).utf8)
        var headers = [("Content-Type", "application/json")]
        if error.status == 503 { headers.append(("Retry-After", "1")) }
        writeNow(
            connection.fd,
            responseHead(
                status: error.status, headers: headers, framing: "Content-Length: \(body.count)", keepAlive: false)
                + body)
        _ = Glibc.shutdown(connection.fd, Int32(SHUT_WR))
        connection.draining = true
        connection.buffer = []
        connection.head = nil
        connection.deadline = deadline(1)
        pending[connection.fd] = connection
    }

    /// Closes a connection the reader holds (or one a request thread handed back to be closed).
    private func finish(_ connection: PendingConnection) {
        releaseBody(connection)
        pending[connection.fd] = nil
        close(connection.fd)
        openConnections -= 1
        perClient[connection.client, default: 1] -= 1
        if perClient[connection.client] == 0 { perClient[connection.client] = nil }
    }

    private func overloaded(_ message: String) -> [UInt8] {
        let body = Array(openAIErrorJSON(message, type: "server_error").utf8)
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
}

/// A connection the reader watches: between requests, or while one arrives (`head` once its head is in).
final class PendingConnection: @unchecked Sendable {  // used by the reader thread, or by the one request thread
    // serving it (then the reader does not hold it)
    let fd: Int32
    /// The client's address (per-client limits).
    let client: String
    var buffer: [UInt8] = []
    var deadline: ContinuousClock.Instant
    /// A byte of the current request has arrived (a timeout is then a 408, not a silent close).
    var started = false
    var firstRequest: Bool
    var head: (head: HTTPRequestHead, headerBytes: Int, bodyLength: Int)?
    /// Body bytes reserved against the server's body memory.
    var reserved = 0
    /// Answered with an error: reading and dropping until the client closes or the moment passes.
    var draining = false
    /// Handed back by its request thread to be closed.
    var closeWhenReturned = false

    init(fd: Int32, client: String, deadline: ContinuousClock.Instant, firstRequest: Bool) {
        self.fd = fd
        self.client = client
        self.deadline = deadline
        self.firstRequest = firstRequest
    }
}
